// Whether the qemu tests can run here: QEMU installed and the guest image built. Under CI=true a
// missing piece is a failure naming `npm run images`, never a silent skip.
import { test } from 'vitest';
import { findGuestImage, findOnPath, QEMU_BINARY, type GuestImage } from '../../harness/qemu/images.js';

export type QemuTestEnv = { readonly image: GuestImage; readonly skip: false } | { readonly skip: true; readonly reason: string };

/** Finds QEMU and the image; under CI registers a failing test when either is missing. */
export async function qemuTestEnv(): Promise<QemuTestEnv> {
  const qemu = await findOnPath(QEMU_BINARY);
  const found = await findGuestImage();
  let env: QemuTestEnv;
  if (qemu === undefined) env = { skip: true, reason: `${QEMU_BINARY} is not installed (run \`npm run images\`)` };
  else if ('missing' in found) env = { skip: true, reason: found.missing };
  else env = { skip: false, image: found.image };
  if (env.skip && process.env['CI'] === 'true') {
    const reason = env.reason;
    test('QEMU and the guest image are present (CI requires `npm run images` first)', () => {
      throw new Error(`qemu tests cannot run: ${reason}`);
    });
  }
  return env;
}
