/**
 * Copy an action or observation with some fields replaced, going through its
 * constructor so the copy is validated and keeps its class (and getters).
 */
export const copyWith = <A extends { readonly _tag: string }>(value: A, patch: Partial<Omit<A, "_tag">>): A => {
  const { _tag: _, ...fields } = value as unknown as Record<string, unknown>
  const Class = value.constructor as new(fields: Record<string, unknown>) => A
  return new Class({ ...fields, ...patch })
}
