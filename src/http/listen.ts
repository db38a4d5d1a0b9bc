import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts `server` listening on 127.0.0.1 only (0: a free port); resolves with the port it got. */
export async function listenLoopback(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
