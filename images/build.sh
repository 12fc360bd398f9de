#!/usr/bin/env bash
# Builds the ptlab QEMU guest: a PVH-bootable vmlinux and an initramfs made from Debian packages
# (kernel modules, busybox-static, qemu-guest-agent, dropbear), the guest init files in
# images/guest-root/, the helper from guest/ when present, an SSH host key and a client key pair.
# Unattended and idempotent: installs missing host packages, caches the .debs, and skips the
# build when nothing it depends on changed. Outputs go to images/out/ (gitignored).
# `--kernel 6.12` builds on the 6.12 kernel of bookworm-backports instead, into images/out-6.12/
# (docs/qemu.md §7): the module is tested on both kernels.
# Recipe and measurements: docs/qemu.md §2 and §7.
set -euo pipefail
export LC_ALL=C DEBIAN_FRONTEND=noninteractive

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
KERNEL=bookworm
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) KERNEL=${2:-}; shift 2 ;;
    --kernel=*) KERNEL=${1#--kernel=}; shift ;;
    *) echo "usage: images/build.sh [--kernel 6.12]" >&2; exit 2 ;;
  esac
done
case $KERNEL in
  bookworm|6.1) KERNEL=bookworm; DEFAULT_OUT=$HERE/out ;;
  6.12) DEFAULT_OUT=$HERE/out-6.12 ;;
  *) echo "images/build.sh: --kernel takes 6.1 or 6.12, not '$KERNEL'" >&2; exit 2 ;;
esac
OUT=${PTLAB_IMAGES_OUT:-$DEFAULT_OUT}
CACHE=${PTLAB_DEB_CACHE:-$OUT/cache}
KEYS=$OUT/keys
WORK=$OUT/work
# Modules the guest loads (rcS); their modules.dep closure goes into the initramfs.
GUEST_MODULES="virtio_pci virtio_console virtio_net virtio_rng msr cpuid button evdev"
HOST_PKGS="qemu-system-x86 busybox-static cpio xz-utils zstd gzip gcc make libc6-dev openssh-client dropbear-bin"
# The module's parameters in the test guest (guest/kmod/ptlab.c allow_msr=): the tests write
# IA32_TSC_AUX and IA32_PKRS, which a lab machine's module refuses.
TEST_ALLOW_MSR="0xc0000103,0x6e1"
BACKPORTS_LIST=/etc/apt/sources.list.d/ptlab-bookworm-backports.sources

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (installs host packages and creates /dev/console in the initramfs)"

APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update"
    apt-get update -qq >/dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
}

# Installs each named package that dpkg does not report as installed.
ensure_host_pkgs() {
  local missing=() p
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_update_once
    log "installing host packages: ${missing[*]}"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
  fi
}

# The kernel ABI the linux-image-amd64 metapackage points at (never hard-coded: docs/qemu.md §7);
# for --kernel 6.12, the metapackage of bookworm-backports.
resolve_kver() {
  local meta=linux-image-amd64
  [ "$KERNEL" = 6.12 ] && meta=linux-image-amd64/bookworm-backports
  apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -1
}

# The Debian mirror this machine's bookworm source uses (deb822 .sources or a sources.list line).
debian_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
         /Suites:[^\n]*bookworm([ \n]|$)/ { for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { sub(/^URIs: */, "", $i); split($i, u, " "); print u[1]; exit } }' "$f"
  done
  # One-line sources, where they exist (a machine may have deb822 .sources files only).
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' "$f"
  done
}

# Adds bookworm-backports, from the machine's own mirror, to apt's sources (once).
ensure_backports() {
  [ -f "$BACKPORTS_LIST" ] && return
  local mirror
  # `|| true`: under pipefail a source file that goes away, or head closing the pipe, is not a failure.
  mirror=$(debian_mirror | head -1) || true
  [ -n "$mirror" ] || die "no bookworm entry in apt's sources to take the mirror of bookworm-backports from"
  log "adding bookworm-backports from $mirror ($BACKPORTS_LIST)"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" > "$BACKPORTS_LIST"
  APT_UPDATED=0
  apt_update_once
}

# Prints "package candidate-version" for each package, in one apt-cache call (each call
# rebuilds apt's cache where pkgcache.bin is disabled, ~1.5 s).
candidate_versions() {
  apt-cache policy "$@" 2>/dev/null | awk '/^[^ ].*:$/ { p = substr($0, 1, length($0) - 1) } /Candidate:/ { print p, $2 }'
}

# Downloads package $1 at version $2 into the cache unless it is already there; prints the path.
fetch_deb() {
  local pkg=$1 want=$2 f
  [ -n "$want" ] && [ "$want" != "(none)" ] || die "no candidate version for $pkg"
  for f in "$CACHE/${pkg}"_*.deb; do
    [ -e "$f" ] || continue
    if [ "$(dpkg-deb -f "$f" Version)" = "$want" ]; then
      echo "$f"
      return
    fi
    rm -f "$f"   # a stale version
  done
  log "downloading $pkg $want"
  (cd "$CACHE" && apt-get download -qq "$pkg=$want" >/dev/null 2>&1) || die "apt-get download $pkg=$want failed"
  for f in "$CACHE/${pkg}"_*.deb; do
    [ -e "$f" ] && { echo "$f"; return; }
  done
  die "download of $pkg left no .deb in $CACHE"
}

# --- 1. host tools and the kernel version ---------------------------------------------------
ensure_host_pkgs $HOST_PKGS
[ "$KERNEL" = 6.12 ] && ensure_backports
KVER=$(resolve_kver)
if [ -z "$KVER" ]; then
  apt_update_once
  KVER=$(resolve_kver)
fi
[ -n "$KVER" ] || die "cannot resolve the kernel version from linux-image-amd64 (apt-cache depends)"
# Headers on the host, for the out-of-tree module in guest/ (docs/qemu.md §6). A backports
# kernel's headers may need backports' linux-base: only then is the suite preferred.
if ! dpkg -s "linux-headers-$KVER" >/dev/null 2>&1; then
  apt_update_once
  log "installing host packages: linux-headers-$KVER"
  apt-get install -y -qq --no-install-recommends "linux-headers-$KVER" >/dev/null 2>&1 \
    || { [ "$KERNEL" = 6.12 ] && apt-get install -y -qq --no-install-recommends "linux-headers-$KVER" \
           linux-base/bookworm-backports >/dev/null; } \
    || die "apt-get install linux-headers-$KVER failed"
fi
mkdir -p "$OUT" "$CACHE" "$KEYS"
# images/out holds the SSH host and client private keys, and the initramfs carries the host key:
# private to this user, also for a build made before this rule.
chmod 700 "$OUT" "$KEYS"
for f in "$OUT/initramfs.cpio.gz" "$KEYS/ssh_host_ed25519_key" "$KEYS/id_ed25519"; do if [ -f "$f" ]; then chmod 600 "$f"; fi; done

DEB_PKGS="linux-image-$KVER qemu-guest-agent dropbear-bin libtomcrypt1 libtommath1"
CANDIDATES=$(candidate_versions $DEB_PKGS)
DEBS=()
for p in $DEB_PKGS; do
  DEBS+=("$(fetch_deb "$p" "$(awk -v p="$p" '$1 == p { print $2 }' <<<"$CANDIDATES")")")
done

# --- 2. keys: made once, kept across rebuilds ------------------------------------------------
BB=/bin/busybox
[ -x "$BB" ] || die "busybox-static did not install /bin/busybox"

# --- 3. skip when nothing changed ------------------------------------------------------------
inputs_hash() {
  {
    echo "kver=$KVER"
    for d in "${DEBS[@]}"; do basename "$d"; done
    sha256sum "$HERE/build.sh"
    echo "kernel=$KERNEL"
    (cd "$HERE/guest-root" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
    if [ -d "$REPO/guest" ]; then
      (cd "$REPO/guest" && find . -type f \( -name '*.c' -o -name '*.h' -o -name 'Makefile' -o -name 'Kbuild' \) -print0 | sort -z | xargs -0 -r sha256sum)
    fi
    dpkg-query -W -f '${Version}\n' busybox-static
  } | sha256sum | cut -d' ' -f1
}
INPUTS=$(inputs_hash)
if [ "${PTLAB_IMAGES_FORCE:-0}" != 1 ] && [ -f "$OUT/manifest.json" ] && [ -f "$OUT/vmlinux" ] && [ -f "$OUT/initramfs.cpio.gz" ] && [ -f "$KEYS/id_ed25519" ] \
   && grep -q "\"inputs\": \"$INPUTS\"" "$OUT/manifest.json"; then
  log "up to date (kernel $KVER): $OUT"
  exit 0
fi

rm -rf "$WORK"
EXTRACT=$WORK/extract
ROOT=$WORK/root
mkdir -p "$EXTRACT" "$ROOT"
for d in "${DEBS[@]}"; do dpkg-deb -x "$d" "$EXTRACT"; done
EXLIB="$EXTRACT/usr/lib/x86_64-linux-gnu:$EXTRACT/lib/x86_64-linux-gnu"

if [ ! -f "$KEYS/ssh_host_ed25519_key" ]; then
  log "generating the guest SSH host key"
  LD_LIBRARY_PATH=$EXLIB "$EXTRACT/usr/bin/dropbearkey" -t ed25519 -f "$KEYS/ssh_host_ed25519_key" >/dev/null 2>&1 \
    || die "dropbearkey failed"
fi
# The host key's public half in OpenSSH form, for pinning (ssh2 hostVerifier).
LD_LIBRARY_PATH=$EXLIB "$EXTRACT/usr/bin/dropbearkey" -y -f "$KEYS/ssh_host_ed25519_key" 2>/dev/null \
  | grep '^ssh-ed25519 ' | cut -d' ' -f1,2 > "$KEYS/ssh_host_ed25519_key.pub"
[ -s "$KEYS/ssh_host_ed25519_key.pub" ] || die "cannot read the host key's public half"
if [ ! -f "$KEYS/id_ed25519" ]; then
  log "generating the client key pair"
  ssh-keygen -q -t ed25519 -N '' -C ptlab-client -f "$KEYS/id_ed25519" || die "ssh-keygen failed"
fi

# --- 4. kernel: vmlinux for PVH direct boot (docs/qemu.md §2 step 2) ----------------------------
VMLINUZ=$EXTRACT/boot/vmlinuz-$KVER
[ -f "$VMLINUZ" ] || die "$VMLINUZ missing from linux-image-$KVER"
# Debian's 6.1 compresses the kernel with xz, its 6.12 with zstd. Both tools complain about the
# bytes after the stream; the ELF is complete.
off=$(grep -obUaP '\xfd7zXZ\x00' "$VMLINUZ" | head -1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
  tail -c +$((off + 1)) "$VMLINUZ" | xz -dc > "$WORK/vmlinux" 2>/dev/null || true
else
  off=$(grep -obUaP '\x28\xb5\x2f\xfd' "$VMLINUZ" | head -1 | cut -d: -f1 || true)
  [ -n "$off" ] || die "no xz or zstd stream in $VMLINUZ"
  tail -c +$((off + 1)) "$VMLINUZ" | zstd -dcq > "$WORK/vmlinux" 2>/dev/null || true
fi
[ "$(head -c 4 "$WORK/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || die "extracted vmlinux is not an ELF file"

# --- 5. root filesystem ------------------------------------------------------------------------
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,run,tmp,root/.ssh,var/log,lib64,lib/x86_64-linux-gnu,etc/dropbear}
ln -s ../run "$ROOT/var/run"
cp "$BB" "$ROOT/bin/busybox"
for a in $("$BB" --list-full); do
  [ -e "$ROOT/$a" ] || [ -L "$ROOT/$a" ] || ln -s /bin/busybox "$ROOT/$a"
done
ln -sf bin/busybox "$ROOT/init"
mknod -m 600 "$ROOT/dev/console" c 5 1
mknod -m 666 "$ROOT/dev/null" c 1 3

# Kernel modules: the modules.dep closure of GUEST_MODULES (Debian ships no modules.dep).
MODDIR=lib/modules/$KVER
"$BB" depmod -b "$EXTRACT" "$KVER"
declare -A WANT=()
add_module() {   # $1 = path relative to $MODDIR
  local rel=$1 dep
  [ -n "${WANT[$rel]:-}" ] && return
  WANT[$rel]=1
  for dep in $(sed -n "s#^$rel:##p" "$EXTRACT/$MODDIR/modules.dep"); do add_module "$dep"; done
}
for m in $GUEST_MODULES; do
  pat=$(echo "$m" | sed 's/[-_]/[-_]/g')
  rel=$(cut -d: -f1 "$EXTRACT/$MODDIR/modules.dep" | grep -E "/${pat}\.ko(\.xz)?$" | head -1 || true)
  if [ -z "$rel" ]; then
    grep -qE "/${pat}\.ko" "$EXTRACT/$MODDIR/modules.builtin" 2>/dev/null || die "module $m is neither a module nor built in"
    continue
  fi
  add_module "$rel"
done
# Compressed modules (6.12 ships .ko.xz) go in decompressed: busybox insmod takes plain ELF.
for rel in "${!WANT[@]}"; do
  mkdir -p "$ROOT/$MODDIR/$(dirname "$rel")"
  case $rel in
    *.ko.xz) xz -dc "$EXTRACT/$MODDIR/$rel" > "$ROOT/$MODDIR/${rel%.xz}" ;;
    *) cp "$EXTRACT/$MODDIR/$rel" "$ROOT/$MODDIR/$rel" ;;
  esac
done
cp "$EXTRACT/$MODDIR"/modules.builtin* "$EXTRACT/$MODDIR/modules.order" "$ROOT/$MODDIR/" 2>/dev/null || true
"$BB" depmod -b "$ROOT" "$KVER"

# Copies an ELF binary and every library ldd resolves (extracted packages first, then the host).
copy_elf() {   # $1 = source, $2 = destination in ROOT
  local src=$1 dst=$2 lib
  mkdir -p "$ROOT/$(dirname "$dst")"
  cp "$src" "$ROOT/$dst"
  if LD_LIBRARY_PATH=$EXLIB ldd "$src" | grep -q 'not found'; then
    die "libraries of $src not found: $(LD_LIBRARY_PATH=$EXLIB ldd "$src" | grep 'not found' | tr '\n' ' ')"
  fi
  for lib in $(LD_LIBRARY_PATH=$EXLIB ldd "$src" | grep -oE '/[^ ]+'); do
    case $lib in
      */ld-linux-x86-64.so.2) cp -L "$lib" "$ROOT/lib64/ld-linux-x86-64.so.2" ;;
      *) cp -L "$lib" "$ROOT/lib/x86_64-linux-gnu/$(basename "$lib")" ;;
    esac
  done
}
copy_elf "$EXTRACT/usr/sbin/qemu-ga" usr/sbin/qemu-ga
copy_elf "$EXTRACT/usr/sbin/dropbear" usr/sbin/dropbear

# Guest init files (rcS, inittab, acpi hook, shutdown wrapper, passwd …).
cp -a "$HERE/guest-root/." "$ROOT/"
chmod 755 "$ROOT/etc/init.d/"* "$ROOT/etc/acpi/PWRF/00000080" "$ROOT/sbin/shutdown"
cp "$KEYS/ssh_host_ed25519_key" "$ROOT/etc/dropbear/dropbear_ed25519_host_key"
chmod 600 "$ROOT/etc/dropbear/dropbear_ed25519_host_key"
cut -d' ' -f1,2 "$KEYS/id_ed25519.pub" > "$ROOT/root/.ssh/authorized_keys"
chmod 700 "$ROOT/root" "$ROOT/root/.ssh"
chmod 600 "$ROOT/root/.ssh/authorized_keys"

# The line helper from guest/, when its sources exist (rcS starts /usr/bin/ptlab-helper if present).
if [ -f "$REPO/guest/helper/Makefile" ]; then
  log "building the guest helper"
  mkdir -p "$WORK/helper"
  make -s -C "$REPO/guest/helper" O="$WORK/helper" >/dev/null || die "guest helper build failed"
  install -m 755 "$WORK/helper/ptlab-helper" "$ROOT/usr/bin/ptlab-helper"
fi

# The ptlab kernel module from guest/kmod, built against the headers of KVER (docs/qemu.md §6:
# ~2 s; it loads unsigned and only taints the kernel), with the kernel's extra warnings and
# kernel-doc checks (W=1): a warning fails the build. rcS insmods it when present.
if [ -f "$REPO/guest/kmod/Makefile" ]; then
  log "building the guest kernel module"
  KDIR=/usr/src/linux-headers-$KVER
  [ -d "$KDIR" ] || die "$KDIR missing: linux-headers-$KVER did not install"
  make -s -C "$REPO/guest/kmod" KVER="$KVER" KDIR="$KDIR" BUILD="$WORK/kmod" W=1 >/dev/null 2>"$WORK/kmod.log" \
    || die "guest module build failed: $(tail -20 "$WORK/kmod.log")"
  ! grep -q 'warning:' "$WORK/kmod.log" || die "the guest module builds with warnings: $(grep -A3 'warning:' "$WORK/kmod.log" | head -20)"
  mkdir -p "$ROOT/$MODDIR/extra"
  install -m 644 "$WORK/kmod/ptlab.ko" "$ROOT/$MODDIR/extra/ptlab.ko"
  echo "$TEST_ALLOW_MSR" > "$ROOT/etc/ptlab-allow-msr"
fi

# --- 6. pack and publish -----------------------------------------------------------------------
(cd "$ROOT" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) > "$WORK/initramfs.cpio.gz"
mv -f "$WORK/vmlinux" "$OUT/vmlinux"
chmod 600 "$WORK/initramfs.cpio.gz" # it holds the SSH host private key
mv -f "$WORK/initramfs.cpio.gz" "$OUT/initramfs.cpio.gz"

file_entry() {   # $1 = path relative to OUT
  printf '    {"path": "%s", "bytes": %d, "sha256": "%s"}' "$1" "$(stat -c %s "$OUT/$1")" "$(sha256sum "$OUT/$1" | cut -d' ' -f1)"
}
{
  printf '{\n  "kernelVersion": "%s",\n  "built": "%s",\n  "inputs": "%s",\n' "$KVER" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$INPUTS"
  printf '  "kernel": "vmlinux",\n  "initrd": "initramfs.cpio.gz",\n'
  printf '  "hostKey": "keys/ssh_host_ed25519_key.pub",\n  "clientKey": "keys/id_ed25519",\n'
  printf '  "helper": %s,\n' "$([ -x "$ROOT/usr/bin/ptlab-helper" ] && echo true || echo false)"
  printf '  "module": %s,\n' "$([ -f "$ROOT/$MODDIR/extra/ptlab.ko" ] && echo true || echo false)"
  printf '  "packages": [%s],\n' "$(for d in "${DEBS[@]}"; do printf '"%s",' "$(basename "$d")"; done | sed 's/,$//')"
  printf '  "files": [\n'
  file_entry vmlinux; printf ',\n'
  file_entry initramfs.cpio.gz; printf ',\n'
  file_entry keys/ssh_host_ed25519_key.pub; printf ',\n'
  file_entry keys/id_ed25519.pub; printf '\n'
  printf '  ]\n}\n'
} > "$OUT/manifest.json.tmp"
mv -f "$OUT/manifest.json.tmp" "$OUT/manifest.json"
rm -rf "$WORK"
log "built kernel $KVER: $OUT/vmlinux, $OUT/initramfs.cpio.gz"
