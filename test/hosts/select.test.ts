// `--tags` (docs/hosts.md "Selecting hosts"): a host is selected when it has any of the tags given;
// without --tags every host is; tags that select nothing are a usage error naming the tags there.
import { describe, expect, test } from 'vitest';
import { parseInventory } from '../../harness/hosts/inventory.js';
import { parseTags, selectHosts } from '../../harness/hosts/select.js';

const INV = parseInventory('lab.yaml', [
  'hosts:',
  '  - {name: skl1, host: a, tags: [skylake, rack1]}',
  '  - {name: icl1, host: b, tags: [icelake, rack1]}',
  '  - {name: icl2, host: c, tags: [icelake, rack2]}',
  '  - {name: bare, host: d}',
].join('\n'));
const names = (tags?: string[]) => selectHosts(INV, tags).map((h) => h.name);

describe('selecting hosts by tag', () => {
  test.for([
    { tags: undefined, want: ['skl1', 'icl1', 'icl2', 'bare'] },
    { tags: ['icelake'], want: ['icl1', 'icl2'] },
    { tags: ['skylake', 'rack2'], want: ['skl1', 'icl2'] },
    { tags: ['rack1', 'icelake'], want: ['skl1', 'icl1', 'icl2'] },
  ])('--tags $tags selects $want, in file order', ({ tags, want }) => {
    expect(names(tags)).toEqual(want);
  });

  test('tags no host has are refused, with the tags the file has', () => {
    expect(() => names(['broadwell'])).toThrow('--tags broadwell: no host in lab.yaml has any of these tags (tags there: icelake, rack1, rack2, skylake)');
  });

  test.for(['a,,b', ',a', 'a b', ''])('--tags %j is refused', (text) => {
    expect(() => parseTags(text)).toThrow(/--tags takes tags separated by commas/);
  });

  test('--tags splits at commas', () => {
    expect(parseTags('skylake,rack2')).toEqual(['skylake', 'rack2']);
  });
});
