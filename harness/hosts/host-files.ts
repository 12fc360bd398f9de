// The files an inventory entry names, checked before anything runs (docs/hosts.md "Errors"): the
// client key is readable and private, and the known-host file pins a key for the entry's host and
// port (harness/ssh/known-hosts.ts, as `--target ssh` reads them). Only the hosts a run selects
// are checked: an entry filtered out by --tags may name keys this machine does not have.
import { readClientKey, readKnownHosts } from '../ssh/key-files.js';
import { pinnedHostKeys } from '../ssh/known-hosts.js';
import { InventoryError } from './errors.js';
import type { Inventory, LabHost } from './inventory.js';

/** Throws InventoryError ('key' or 'known-host') at the entry of the first host whose files are wrong. */
export async function checkHostFiles(inv: Inventory, hosts: readonly LabHost[]): Promise<void> {
  for (const h of hosts) {
    // Where the path is written, or the entry itself for a default path.
    const at = (k: string) => inv.pos(['hosts', h.index, k]);
    await readClientKey(h.key, 'key').catch((e: unknown) => {
      throw new InventoryError('key', at('key'), `host ${h.name}: ${(e as Error).message}`);
    });
    const known = await readKnownHosts(h.knownHost, 'known-host').catch((e: unknown) => {
      throw new InventoryError('known-host', at('known-host'), `host ${h.name}: ${(e as Error).message}`);
    });
    try {
      pinnedHostKeys(known, h.host, h.port, h.knownHost);
    } catch (e) {
      throw new InventoryError('known-host', at('known-host'), `host ${h.name}: ${(e as Error).message}`);
    }
  }
}
