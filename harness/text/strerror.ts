// The system's words for an errno code (strerror(3) on Linux), so that ptlab says what a Unix
// tool says — `ptlab dump: /x.pt: No such file or directory`, `host:22: Connection refused` —
// never Node's code twice (`ENOENT: no such file or directory, open '/x.pt'`).

/** strerror(3) for the codes an input file, a socket or a connection gives. */
const STRERROR: Readonly<Record<string, string>> = {
  ENOENT: 'No such file or directory', EISDIR: 'Is a directory', ENOTDIR: 'Not a directory', EACCES: 'Permission denied',
  EPERM: 'Operation not permitted', ELOOP: 'Too many levels of symbolic links', EIO: 'Input/output error',
  ENXIO: 'No such device or address', ENAMETOOLONG: 'File name too long', EMFILE: 'Too many open files',
  ENOSPC: 'No space left on device', EROFS: 'Read-only file system', EEXIST: 'File exists', ENOTEMPTY: 'Directory not empty',
  ECONNREFUSED: 'Connection refused', ECONNRESET: 'Connection reset by peer', ETIMEDOUT: 'Connection timed out',
  EHOSTUNREACH: 'No route to host', ENETUNREACH: 'Network is unreachable', EPIPE: 'Broken pipe',
};

/** The words for `e`'s errno code, or its own message when it has no code this table knows. */
export function systemWords(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return (typeof code === 'string' ? STRERROR[code] : undefined) ?? (e instanceof Error ? e.message : String(e));
}
