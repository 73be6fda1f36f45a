// The API process's Node options (docs/operations.md "Processes"), as a module that reads no
// configuration at import, for every launcher of api/main.ts: bin/start.ts (`npm start`), the
// benches' API server, tooling/rolling-deploy.ts, and package.json's `start:api` (which spells
// them out: a shell line cannot import this).
//
// --no-allocation-site-pretenuring: V8 decides per allocation site, from how many of its objects
// survived young collections so far, to allocate that site's objects straight in the old
// generation. In the API process that decision fell on many sites (31 in one traced run, the
// first before any load, against 1 in a bare Koa + pg server), per-request ones among them: their
// short-lived objects then sat in the old generation until the next full collection and kept the
// strings they point at (a page's row values) alive through every young collection, so those
// were promoted too. A process made the decision or not for its whole life: of 18 runs of the
// post-list bench, 14 promoted 1.6–2.7 MB per scavenge (GC 158–252 µs per request) and 4 promoted
// 0.3–0.5 MB (GC 65–138). With the option, each of 4 runs was in the second group (bench/README.md
// "Fourth pass"). Objects that do live long are copied once more on their way to the old
// generation; for a process whose allocations are nearly all per request that costs less than
// it saves.
//
// --max-semi-space-size=32 (MiB; V8's default on this heap size is 16): the young generation is
// collected each time a semi-space fills, about every 27 post-list requests at the 600 KiB each
// allocates; under load a request lives about as long as that interval (32 in flight, p50 18 ms
// against a scavenge every 16 ms), so whatever it holds across its awaits survived two
// collections and was promoted, and the old generation's growth paid for concurrent marking and
// full collections too: the process's CPU per request rose from 544 to 662 µs between the first
// and the second round of one run. With twice the semi-space, a request ends before its second
// collection: 496–516 µs per request, GC pauses 42–49 µs against 59–74 (bench/README.md,
// posts-list "Fifth pass"). The young generation may then take 32 MiB more memory.

export const API_NODE_ARGS: readonly string[] = ['--no-allocation-site-pretenuring', '--max-semi-space-size=32'];
