// The files of a run directory (docs/design.md "The run directory", a contract other tools read):
// result.json, transcript.jsonl, trace.pt, losses.json, image.bin, image.json and, where the
// reference model was the PT unit, truth.jsonl; and the most bytes each may hold.

/** The file names of the contract. */
export const RUN_FILES = {
  result: 'result.json', transcript: 'transcript.jsonl', trace: 'trace.pt', losses: 'losses.json',
  image: 'image.bin', imageJson: 'image.json', truth: 'truth.jsonl',
} as const;

/** A file's name in a run directory. */
export type RunFile = (typeof RUN_FILES)[keyof typeof RUN_FILES];

/**
 * The most bytes each file of a run directory holds, far above what a run writes (a stress run's
 * transcript is tens of MB, its trace a few): a larger file, a device or a FIFO there is not ptlab's.
 */
export const RUN_FILE_MAX_BYTES: Readonly<Record<RunFile, number>> = {
  'result.json': 16 << 20, 'transcript.jsonl': 256 << 20, 'trace.pt': 256 << 20, 'losses.json': 16 << 20,
  'image.bin': 256 << 20, 'image.json': 1 << 20, 'truth.jsonl': 256 << 20,
};
