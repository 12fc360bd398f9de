// kvm-guest-limits: what a QEMU/KVM guest sees (docs/design.md; docs/sdm/cpuid.md §6
// "QEMU -cpu …,+intel-pt", docs/prior-art.md §6): QEMU's fixed leaf 14H, no PMI
// preservation, no XSAVES of PT state, and KVM's extra #GP rules. ptlab must
// refuse these up front, naming the CPUID bit, instead of failing obscurely.
import type { Scenario } from './kit/scenario.js';
import { topa } from './kit/helpers.js';

const CTL = 0x570, STATUS = 0x571;
const hex = (n: number) => `0x${(n >>> 0).toString(16)}`;

/** The `kvm-guest-limits` scenario (see the file comment). */
export const kvmGuestLimits: Scenario = {
  name: 'kvm-guest-limits',
  checks: "QEMU's fixed CPUID leaf 14H; PMI preservation and XSAVES switching refused before any WRMSR; CTL bit 56 and STATUS bit 7 raise #GP",
  appliesTo: 'the kvm-guest profile (and a QEMU/KVM guest)',
  targets: ['sim', 'qemu'],
  skip: (env) => (env.profile.name === 'kvm-guest' ? undefined : 'only a KVM guest has these limits (use --cpu kvm-guest)'),
  negative: 'swallow-gp',
  async run(ctx) {
    const t = ctx.target;
    const l0 = await t.cpuid(0x14, 0), l1 = await t.cpuid(0x14, 1);
    // QEMU target/i386/cpu.c INTEL_PT_* (docs/sdm/cpuid.md §6 table): 1 / 0xF / 0x7 and 0x02490002 / 0x003F1FFF.
    ctx.expectEqual('CPUID.(14H,0) EAX/EBX/ECX = 0x1 / 0xf / 0x7', [hex(l0.eax), hex(l0.ebx), hex(l0.ecx)], ['0x1', '0xf', '0x7']);
    ctx.expectEqual('CPUID.(14H,1) EAX/EBX = 0x2490002 / 0x3f1fff', [hex(l1.eax), hex(l1.ebx)], ['0x2490002', '0x3f1fff']);
    await ctx.expectRefused('a PMI-preservation request is refused (unsupported) before any WRMSR', 'unsupported',
      () => ctx.trace(topa('grow', 3, { InjectPsbPmiOnEnable: true })));
    await ctx.expectRefused('XSAVES context switching is refused (unsupported) before any WRMSR', 'unsupported',
      () => ctx.trace(topa('grow', 3, { switching: 'xsaves' })));
    await ctx.expectGp('#GP on WRMSR IA32_RTIT_CTL with InjectPsbPmiOnEnable (bit 56)', () => t.wrmsr(0, CTL, 1n << 56n));
    await ctx.expectGp('#GP on WRMSR IA32_RTIT_STATUS with PendTopaPMI (bit 7)', () => t.wrmsr(0, STATUS, 1n << 7n));
  },
};
