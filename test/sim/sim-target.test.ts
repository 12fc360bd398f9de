// SimTarget specifics beyond the shared contract.
import { describe, expect, test } from 'vitest';
import { GeneralProtectionError } from '../../driver/hw/cpu-fault.js';
import { SimTarget } from '../../harness/sim/sim-target.js';

const workload = { name: 'w', image: new Uint8Array([0xc3]), base: 0x1000_0000n, entry: 0x1000_0000n };

describe('SimTarget', () => {
  test('start() of a workload without a model yields one fault event with PtError bad_config', async () => {
    await using t = await SimTarget.create({ profile: 'skylake' });
    const events = [];
    for await (const e of t.start(workload, 0).events) events.push(e);
    expect(events).toEqual([{ kind: 'fault', cpu: 0, error: expect.objectContaining({ code: 'bad_config' }) }]);
  });
  test('description is sim:<profile>', async () => {
    await using t = await SimTarget.create({ profile: 'kvm-guest' });
    expect(t.description).toBe('sim:kvm-guest');
  });
  test('each logical processor has its own MSRs', async () => {
    await using t = await SimTarget.create({ profile: 'skylake', cpus: 2 });
    await t.wrmsr(1, 0x560, 0x4000n);
    expect([await t.rdmsr(0, 0x560), await t.rdmsr(1, 0x560)]).toEqual([0n, 0x4000n]);
  });
  test('an unknown CPU number is PtError bad_config', async () => {
    await using t = await SimTarget.create({ profile: 'skylake' });
    await expect(t.rdmsr(1, 0x570)).rejects.toMatchObject({ code: 'bad_config' });
  });
  test('pmiEnable clears the LVT mask bit', async () => {
    await using t = await SimTarget.create({ profile: 'skylake' });
    await t.wrmsr(0, 0x834, 0x1_00fen);
    await t.pmiEnable(0);
    expect(await t.rdmsr(0, 0x834)).toBe(0xfen);
  });
  test('CPUID.(0DH,1):EBX follows IA32_XSS[8] (576 + AVX 256, + PT 128)', async () => {
    await using t = await SimTarget.create({ profile: 'skylake' });
    const before = (await t.cpuid(0xd, 1)).ebx;
    await t.wrmsr(0, 0xda0, 0x100n);
    expect([before, (await t.cpuid(0xd, 1)).ebx]).toEqual([832, 960]);
  });
  test('a #GP from wrmsr carries the model rule', async () => {
    await using t = await SimTarget.create({ profile: 'broadwell' });
    const e = await t.wrmsr(0, 0x570, 0x105n).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GeneralProtectionError);
    expect((e as GeneralProtectionError).fault).toMatchObject({ rule: 'BDM106' });
  });
});

describe('SimTarget output stage', () => {
  test('bytes handed to output(cpu) land in the ToPA region the driver programmed', async () => {
    await using t = await SimTarget.create({ profile: 'skylake' });
    const table = await t.phys.alloc(4096, 4096), region = await t.phys.alloc(4096, 4096);
    const entries = new BigUint64Array([region.base, table.base | 1n]); // [4 KiB region, END → table]
    await t.phys.write(table.base, new Uint8Array(entries.buffer));
    await t.msrBatch(0, [
      { op: 'wrmsr', msr: 0x571, value: 0n },
      { op: 'wrmsr', msr: 0x560, value: table.base },
      { op: 'wrmsr', msr: 0x561, value: 0x7fn },
      { op: 'wrmsr', msr: 0x570, value: 0x2105n },
    ]);
    await t.output(0).writeBytes(new Uint8Array([0x02, 0x82]));
    await t.wrmsr(0, 0x570, 0x2104n);
    // 2 bytes, then the PSB+ the enable wrote (PSB 16 + CBR 4 + PSBEND 2 bytes: docs/sdm/packets.md §8),
    // flushed by the disable: OutputOffset = 24.
    expect([await t.phys.read(region.base, 2), await t.rdmsr(0, 0x561)]).toEqual([new Uint8Array([0x02, 0x82]), (24n << 32n) | 0x7fn]);
  });
});
