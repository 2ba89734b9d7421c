/**
 * OpenHands' draft-editor prompts (`openhands/runtime/utils/edit.py`), verbatim: models tuned on
 * OpenHands' traces expect exactly these.
 */

/** The draft-apply request; the answer must hold the result in `<updated_code>` tags. */
export const draftUserMessage = (oldContents: string, draftChanges: string): string => `
Code changes will be provided in the form of a draft. You will need to apply the draft to the original code.
The original code will be enclosed within \`<original_code>\` tags.
The draft will be enclosed within \`<update_snippet>\` tags.
You need to output the update code within \`<updated_code>\` tags.

Within the \`<updated_code>\` tag, include only the final code after updation. Do not include any explanations or other content within these tags.

<original_code>${oldContents}</original_code>

<update_snippet>${draftChanges}</update_snippet>
    `

export const CORRECT_SYSTEM_MESSAGE =
  `You are a code repair assistant. Now you have an original file content and error information from a static code checking tool (lint tool). Your task is to automatically modify and return the repaired complete code based on these error messages and refer to the current file content.

The following are the specific task steps you need to complete:

Carefully read the current file content to ensure that you fully understand its code structure.

According to the lint error prompt, accurately locate and analyze the cause of the problem.

Modify the original file content and fix all errors prompted by the lint tool.

Return complete, runnable, and error-fixed code, paying attention to maintaining the overall style and specifications of the original code.

Please note:

Please strictly follow the lint error prompts to make modifications and do not miss any problems.

The modified code must be complete and cannot introduce new errors or bugs.

The modified code must maintain the original code function and logic, and no changes unrelated to error repair should be made.`

/** The correction request: the file as written and the lint error observation's text. */
export const correctUserMessage = (fileContent: string, lintError: string): string =>
  `THE FOLLOWING ARE THE ORIGINAL FILE CONTENTS AND THE ERROR INFORMATION REPORTED BY THE LINT TOOL

# CURRENT FILE CONTENT:
\`\`\`
${fileContent}
\`\`\`

# ERROR MESSAGE FROM STATIC CODE CHECKING TOOL:
\`\`\`
${lintError}
\`\`\``
