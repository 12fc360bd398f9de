// The parts of `--pt model` that need no VM: the synchronous guest-RAM adapter
// over the guest-RAM file, the memory the model borrows, attachModel's checks and what it builds
// (over a stand-in guest with a real RAM file), and transcript relocation.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AllocationError, PtError } from '../../driver/base/errors.js';
import type { TranscriptLine } from '../../harness/rundir/transcript-line.js';
import { RecordingTarget } from '../../harness/rundir/recording-target.js';
import { attachModel, modelOptions } from '../../harness/hybrid/attach-model.js';
import { BorrowedMemory } from '../../harness/hybrid/borrowed-memory.js';
import { GuestRamSync } from '../../harness/hybrid/guest-ram-sync.js';
import { normalTranscript } from '../../harness/rundir/normalize-transcript.js';
import type { RamLayout } from '../../harness/qemu/guest-ram.js';
import type { GuestRamView } from '../../harness/qemu/qemu-target.js';
import { openRamFile, type RamFile } from '../../harness/qemu/ram-file.js';
import { SparsePhysMemory } from '../../harness/sim/phys-memory.js';
import { SimTarget } from '../../harness/sim/sim-target.js';

const MiB = 1 << 20;
const LAYOUT: RamLayout = { below4g: BigInt(MiB), above4g: 64n * 1024n };

/** A guest-RAM file of 1 MiB below 4 GiB and 64 KiB above, in a temporary directory. */
async function ramFixture(access: 'mmap' | 'pread'): Promise<{ dir: string; file: string; ram: RamFile }> {
  const dir = await mkdtemp(join(tmpdir(), 'ptlab-ramsync-'));
  const file = join(dir, 'ram');
  await writeFile(file, new Uint8Array(MiB + 64 * 1024));
  return { dir, file, ram: await openRamFile(file, MiB + 64 * 1024, { access }) };
}

const view = (file: RamFile, isModuleBuffer: GuestRamView['isModuleBuffer'] = () => true): GuestRamView => ({ file, layout: LAYOUT, isModuleBuffer });

describe.each(['mmap', 'pread'] as const)('GuestRamSync over the guest-RAM file (%s)', (access) => {
  let fx: Awaited<ReturnType<typeof ramFixture>>;
  beforeAll(async () => { fx = await ramFixture(access); });
  afterAll(async () => {
    fx.ram.close();
    await rm(fx.dir, { recursive: true, force: true });
  });

  test('a write at a physical address below 4 GiB is at that file offset, and reads back', () => {
    const ram = new GuestRamSync(view(fx.ram));
    ram.writeNow(0x1000n, Uint8Array.of(1, 2, 3));
    expect([...ram.readNow(0xfffn, 5)]).toEqual([0, 1, 2, 3, 0]);
    expect([...readFileSync(fx.file).subarray(0x1000, 0x1003)]).toEqual([1, 2, 3]);
  });

  test('a read into a caller\'s array fills its first bytes and returns a view of them', () => {
    const ram = new GuestRamSync(view(fx.ram));
    const into = new Uint8Array(8).fill(0xee);
    const got = ram.readNow(0x1000n, 3, into);
    expect(got.buffer).toBe(into.buffer);
    expect([...into]).toEqual([1, 2, 3, 0xee, 0xee, 0xee, 0xee, 0xee]);
    expect(() => ram.readNow(0x1000n, 9, into)).toThrow(expect.objectContaining({ code: 'bad_config' }));
  });

  test('high RAM at 4 GiB continues the file after the low segment (guest-ram.ts q35 layout)', () => {
    const ram = new GuestRamSync(view(fx.ram));
    ram.writeNow(1n << 32n, Uint8Array.of(9));
    expect(readFileSync(fx.file)[MiB]).toBe(9);
  });

  test('an access outside the module buffers throws PtError bad_address and writes nothing', () => {
    const ram = new GuestRamSync(view(fx.ram, (a) => a >= 0x8000n));
    const e = (() => { try { ram.writeNow(0x2000n, Uint8Array.of(7)); return undefined; } catch (x) { return x; } })();
    expect(e).toMatchObject({ code: 'bad_address' });
    expect(readFileSync(fx.file)[0x2000]).toBe(0);
  });

  test('the module-buffer check is asked at every access (buffers come and go; a disposing guest has none)', () => {
    let buffers = true;
    const ram = new GuestRamSync(view(fx.ram, () => buffers));
    ram.writeNow(0x3000n, Uint8Array.of(4));
    buffers = false;
    expect(() => ram.readNow(0x3000n, 1)).toThrow(expect.objectContaining({ code: 'bad_address' }));
  });

  test('an address that is not guest RAM throws PtError bad_address', () => {
    const ram = new GuestRamSync(view(fx.ram));
    expect(() => ram.readNow(BigInt(MiB) - 2n, 4)).toThrow(PtError);
  });

  test('after close every access throws PtError bad_address, and the shared file stays open for its owner', () => {
    const ram = new GuestRamSync(view(fx.ram));
    ram.close();
    ram.close();
    expect(() => ram.readNow(0n, 1)).toThrow(expect.objectContaining({ code: 'bad_address' }));
    expect(fx.ram.access).toBe(access);
    const one = new Uint8Array(1);
    fx.ram.readInto(0x1000, one);
    expect(one[0]).toBe(1);
  });
});

describe('BorrowedMemory', () => {
  test('reads and writes reach the lent memory, synchronously and not; alloc and free are the owner\'s', async () => {
    const mem = new SparsePhysMemory();
    const b = new BorrowedMemory(mem);
    b.writeNow(0x5000n, Uint8Array.of(1, 2));
    await b.write(0x5002n, Uint8Array.of(3));
    expect([[...mem.readNow(0x5000n, 3)], [...(await b.read(0x5000n, 3))], [...b.readNow(0x5001n, 2)]]).toEqual([[1, 2, 3], [1, 2, 3], [2, 3]]);
    await expect(b.alloc(4096, 4096)).rejects.toBeInstanceOf(AllocationError);
    await expect(b.free({ base: 0x5000n, size: 4096 })).rejects.toMatchObject({ code: 'bad_address' });
    b.close();
    expect([...mem.readNow(0x5000n, 1)]).toEqual([1]); // close leaves the owner's memory alone
    expect(b.maxContiguous).toBe(0);
  });
});

/** A stand-in for the qemu guest: any Target, plus what attachModel asks of the guest. */
class FakeHost extends RecordingTarget {
  viewCalls = 0;
  constructor(inner: SimTarget, readonly cpus: number, private readonly ram: GuestRamView | Error, readonly nmiClearsTraceEn = false) {
    super(inner, () => 0);
  }

  guestRamView(): GuestRamView {
    this.viewCalls++;
    if (this.ram instanceof Error) throw this.ram;
    return this.ram;
  }
}

describe('attachModel', () => {
  let fx: Awaited<ReturnType<typeof ramFixture>>;
  let inner: SimTarget;
  beforeAll(async () => {
    fx = await ramFixture('pread');
    inner = await SimTarget.create({ profile: 'skylake' });
  });
  afterAll(async () => {
    await inner[Symbol.asyncDispose]();
    fx.ram.close();
    await rm(fx.dir, { recursive: true, force: true });
  });

  test('an unknown profile is PtError bad_config, before guest RAM is borrowed', async () => {
    const host = new FakeHost(inner, 1, view(fx.ram));
    await expect(attachModel(host, { profile: 'pentium' as never })).rejects.toMatchObject({ code: 'bad_config' });
    expect(host.viewCalls).toBe(0);
  });

  test('a guest launched with a Linux-style NMI handler (pmiClearsTraceEn) is PtError bad_config: the top half is the model\'s', async () => {
    const host = new FakeHost(inner, 1, view(fx.ram), true);
    await expect(attachModel(host)).rejects.toMatchObject({ code: 'bad_config', message: expect.stringContaining('topHalf') });
  });

  test('a guest whose RAM is not shared with the host refuses with its own error', async () => {
    const host = new FakeHost(inner, 1, new PtError('bad_config', 'guest RAM is not shared'));
    await expect(attachModel(host)).rejects.toMatchObject({ code: 'bad_config', message: 'guest RAM is not shared' });
  });

  test('modelOptions: skylake by default, and only the model\'s options pass through', () => {
    const o = modelOptions({ nmiClearsTraceEn: false, description: 'x' }, { seed: 4, topHalf: { ack: true, clearTraceEn: false }, ...{ memory: { ramSize: 1 } } });
    expect(o).toEqual({ profile: 'skylake', seed: 4, topHalf: { ack: true, clearTraceEn: false } });
  });

  test('builds a fresh model with one PT unit per guest CPU, named model:<profile>, owning the model but not the guest', async () => {
    const host = new FakeHost(inner, 2, view(fx.ram));
    await using t = await attachModel(host, { profile: 'icelake', seed: 9 });
    expect([t.description, t.model.description, t.model.seed, t.owns]).toEqual(['sim:skylake+model:icelake', 'model:icelake', 9, { guest: false, model: true }]);
    t.model.unit(1);
    expect(() => t.model.unit(2)).toThrow(expect.objectContaining({ code: 'bad_config' }));
    expect(await t.rdmsr(1, 0x570)).toBe(0n);
  });

  test('ownsGuest hands the guest to the routing target', async () => {
    const other = await SimTarget.create({ profile: 'skylake' });
    const t = await attachModel(new FakeHost(other, 1, view(fx.ram)), { ownsGuest: true });
    await t[Symbol.asyncDispose]();
    await expect(other.cpuid(0, 0)).rejects.toMatchObject({ code: 'bad_state' });
  });

  test('the model\'s memory is the guest RAM file inside module buffers only, and it cannot allocate', async () => {
    const host = new FakeHost(inner, 1, view(fx.ram, (a, n) => a >= 0x40000n && a + BigInt(n) <= 0x41000n));
    await using t = await attachModel(host);
    t.model.phys.writeNow(0x40010n, Uint8Array.of(0xab));
    expect(readFileSync(fx.file)[0x40010]).toBe(0xab);
    expect(() => t.model.phys.writeNow(0x3fff0n, Uint8Array.of(1))).toThrow(expect.objectContaining({ code: 'bad_address' }));
    await expect(t.model.phys.alloc(4096, 4096)).rejects.toBeInstanceOf(AllocationError);
  });
});

describe('transcripts compared by buffer role (harness/rundir/normalize-transcript.ts, shared by diff and replay)', () => {
  const line = (seq: number, l: Omit<TranscriptLine, 'seq' | 't_us' | 'cpu'> & { cpu?: number }): TranscriptLine =>
    ({ seq, t_us: seq * 10, cpu: 0, ...l });
  const normal = (lines: readonly TranscriptLine[]) => normalTranscript(lines.map((l) => JSON.stringify(l)).join('\n')).map((l) => l.text);
  const sim = [
    line(0, { op: 'alloc', cpu: -1, value: '0x2000/0x2000', result: '0x100000' }),
    line(1, { op: 'wrmsr', msr: '0x560', value: '0x100000' }),
    line(2, { op: 'rdmsr', msr: '0x560', result: '0x101000' }),
    line(3, { op: 'free', cpu: -1, value: '0x100000' }),
  ];
  const guest = [
    line(0, { op: 'alloc', cpu: -1, value: '0x2000/0x2000', result: '0x7a6000' }),
    line(1, { op: 'wrmsr', msr: '0x560', value: '0x7a6000' }),
    line(2, { op: 'rdmsr', msr: '0x560', result: '0x7a7000' }),
    line(3, { op: 'free', cpu: -1, value: '0x7a6000' }),
  ];

  test('alloc, free and OUTPUT_BASE addresses read as the buffer\'s role and offset; t_us and seq are dropped', () => {
    expect(normal(guest)).toEqual(normal(sim));
    expect(normal(guest)[2]).toBe('{"cpu":0,"op":"rdmsr","msr":"0x560","result":"@buf0+0x1000"}');
  });

  test('keeps an address outside every buffer, so a stray address still differs', () => {
    const stray = [...guest.slice(0, 1), line(1, { op: 'wrmsr', msr: '0x560', value: '0x9000000' })];
    expect(normal(stray)[1]).toContain('"value":"0x9000000"');
  });

  test('leaves values of other MSRs alone (an IP filter address is not a buffer address)', () => {
    const other = [...guest.slice(0, 1), line(1, { op: 'wrmsr', msr: '0x580', value: '0x7a6000' })];
    expect(normal(other)[1]).toContain('"value":"0x7a6000"');
  });

  test('a written ToPA entry reads by role with its flags; a base handed out again after a free is the newer buffer', () => {
    const lines = [
      line(0, { op: 'alloc', cpu: -1, value: '0x1000/0x1000', result: '0x5000' }),
      line(1, { op: 'write', cpu: -1, addr: '0x5008', value: '8 bytes', data: '1150000000000000' }),
      line(2, { op: 'free', cpu: -1, value: '0x5000' }),
      line(3, { op: 'alloc', cpu: -1, value: '0x1000/0x1000', result: '0x5000' }),
      line(4, { op: 'wrmsr', msr: '0x560', value: '0x5000' }),
    ];
    const n = normal(lines);
    expect([n[1], n[4]]).toEqual([
      '{"cpu":-1,"op":"write","addr":"@buf0+0x8","value":"8 bytes","data":"@buf0|0x11"}',
      '{"cpu":0,"op":"wrmsr","msr":"0x560","value":"@buf1"}',
    ]);
  });
});
