// The worker process's V8 heap limit (docs/publishing.md "Capacity"), as a module that reads no
// configuration at import: the benches set their environment before lib/config loads, and
// still start their workers as `npm run start:worker` does (package.json repeats the default).

/** MiB; WORKER_HEAP_MIB overrides it, 0 = Node's own limit. */
export const DEFAULT_WORKER_HEAP_MIB = 1024;

/** The node option a worker process starts with, from WORKER_HEAP_MIB as it reads now. */
export function workerHeapArg(heapMiB: number = Number(process.env.WORKER_HEAP_MIB || DEFAULT_WORKER_HEAP_MIB)): string {
  return `--max-old-space-size=${heapMiB}`;
}
