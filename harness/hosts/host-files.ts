// The files an inventory entry names, checked before anything runs (docs/hosts.md "Errors"): the
// client key is readable and private, and the known-host file pins a key for the entry's host and
// port (harness/ssh/known-hosts.ts, as `--target ssh` reads them). Only the hosts a run selects
// are checked: an entry filtered out by --tags may name keys this machine does not have.
import { readFile } from 'node:fs/promises';
import { checkPrivateKey, pinnedHostKey } from '../ssh/known-hosts.js';
import { InventoryError } from './errors.js';
import type { Inventory, LabHost } from './inventory.js';

/** Throws InventoryError ('key' or 'known-host') at the entry of the first host whose files are wrong. */
export async function checkHostFiles(inv: Inventory, hosts: readonly LabHost[]): Promise<void> {
  for (const h of hosts) {
    // Where the path is written, or the entry itself for a default path.
    const at = (k: string) => inv.pos(['hosts', h.index, k]);
    const key = await readFile(h.key).catch((e: unknown) => {
      throw new InventoryError('key', at('key'), `host ${h.name}: cannot read the client key ${h.key}: ${(e as Error).message}`);
    });
    try {
      checkPrivateKey(key, h.key);
    } catch {
      throw new InventoryError('key', at('key'), `host ${h.name}: ${h.key} is a public key; give the private key`);
    }
    const known = await readFile(h.knownHost, 'utf8').catch((e: unknown) => {
      throw new InventoryError('known-host', at('known-host'), `host ${h.name}: cannot read the pinned host key ${h.knownHost}: ${(e as Error).message}`);
    });
    try {
      pinnedHostKey(known, h.host, h.port, h.knownHost);
    } catch (e) {
      throw new InventoryError('known-host', at('known-host'), `host ${h.name}: ${(e as Error).message}`);
    }
  }
}
