// Where the guest image built by images/build.sh is, and whether QEMU is installed.
import { access, readFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** images/out/manifest.json, as build.sh writes it. */
export interface ImageManifest {
  readonly kernelVersion: string;
  readonly built: string;
  readonly kernel: string;
  readonly initrd: string;
  readonly hostKey: string;
  readonly clientKey: string;
  readonly helper: boolean;
  readonly files: readonly { readonly path: string; readonly bytes: number; readonly sha256: string }[];
}

/** A built guest image with absolute paths. */
export interface GuestImage {
  readonly dir: string;
  readonly manifest: ImageManifest;
  readonly kernel: string;
  readonly initrd: string;
  readonly hostKeyPub: string;
  readonly clientKey: string;
}

/** The default QEMU binary. */
export const QEMU_BINARY = 'qemu-system-x86_64';

/** images/out of this checkout (or $PTLAB_IMAGES_OUT): found by walking up to images/build.sh. */
export async function imagesOutDir(): Promise<string> {
  const env = process.env['PTLAB_IMAGES_OUT'];
  if (env !== undefined && env !== '') return resolve(env);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (await exists(join(dir, 'images', 'build.sh'))) return join(dir, 'images', 'out');
    const up = dirname(dir);
    if (up === dir) return resolve('images', 'out');
    dir = up;
  }
}

/** The built image, or undefined with the reason it is missing. */
export async function findGuestImage(): Promise<{ image: GuestImage } | { missing: string }> {
  const dir = await imagesOutDir();
  let manifest: ImageManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as ImageManifest;
  } catch {
    return { missing: `no guest image in ${dir} (run \`npm run images\`)` };
  }
  const image: GuestImage = {
    dir,
    manifest,
    kernel: join(dir, manifest.kernel),
    initrd: join(dir, manifest.initrd),
    hostKeyPub: join(dir, manifest.hostKey),
    clientKey: join(dir, manifest.clientKey),
  };
  for (const f of [image.kernel, image.initrd]) {
    if (!(await exists(f))) return { missing: `${f} is missing (run \`npm run images\`)` };
  }
  return { image };
}

/** The absolute path of `binary` on PATH, or undefined. */
export async function findOnPath(binary: string): Promise<string | undefined> {
  for (const d of (process.env['PATH'] ?? '').split(delimiter)) {
    if (d === '') continue;
    const p = join(d, binary);
    if (await access(p, constants.X_OK).then(() => true, () => false)) return p;
  }
  return undefined;
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(() => true, () => false);
}
