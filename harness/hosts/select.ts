// Which hosts of an inventory a run uses (`--tags t1,t2`, docs/hosts.md "Selecting hosts"): a host
// is selected when it has at least one of the tags; without --tags, every host.
import { PtError } from '../../driver/base/errors.js';
import type { Inventory, LabHost } from './inventory.js';

/** `--tags` as a list: comma-separated, no empty tag. */
export function parseTags(text: string): string[] {
  const tags = text.split(',').map((t) => t.trim());
  if (tags.some((t) => t === '' || /\s/.test(t))) throw new PtError('bad_config', `--tags takes tags separated by commas (e.g. skylake,icelake), got '${text}'`);
  return tags;
}

/** The hosts having any of `tags` (all hosts when `tags` is undefined), in file order; PtError('bad_config') when none has. */
export function selectHosts(inv: Inventory, tags: readonly string[] | undefined): LabHost[] {
  if (tags === undefined) return [...inv.hosts];
  const picked = inv.hosts.filter((h) => h.tags.some((t) => tags.includes(t)));
  if (picked.length === 0) {
    const known = [...new Set(inv.hosts.flatMap((h) => h.tags))].sort();
    throw new PtError('bad_config', `--tags ${tags.join(',')}: no host in ${inv.file} has any of these tags (tags there: ${known.length ? known.join(', ') : 'none'})`);
  }
  return picked;
}
