/**
 * The client reaches a sandbox at its bridge address only when this host is on the bridge (its
 * gateway is one of the host's addresses); otherwise (Docker Desktop, a rootless or remote engine)
 * the address is unreachable and the published port is used.
 */
import { assert, describe, it } from "@effect/vitest"
import type { NetworkInterfaceInfo } from "node:os"
import { bridgeAddress } from "../../src/engines/docker/container.ts"

const iface = (address: string): NetworkInterfaceInfo => ({
  address,
  netmask: "255.255.0.0",
  family: "IPv4",
  mac: "02:42:00:00:00:00",
  internal: false,
  cidr: `${address}/16`
})

describe("bridgeAddress", () => {
  const host = { lo: [{ ...iface("127.0.0.1"), internal: true }], "br-1": [iface("172.19.0.1")] }

  it("the container's address when its gateway is one of this host's addresses", () => {
    assert.strictEqual(bridgeAddress({ IPAddress: "172.19.0.2", Gateway: "172.19.0.1" }, host), "172.19.0.2")
  })

  it("none when the gateway is not on this host (a VM's, a rootless namespace's, a remote engine's bridge)", () => {
    assert.strictEqual(bridgeAddress({ IPAddress: "172.17.0.2", Gateway: "172.17.0.1" }, host), "")
  })

  it("none without a network or a gateway (host networking, an internal network without one)", () => {
    assert.strictEqual(bridgeAddress(undefined, host), "")
    assert.strictEqual(bridgeAddress({ IPAddress: "172.19.0.2", Gateway: "" }, host), "")
  })
})
