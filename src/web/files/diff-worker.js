// One unified diff, computed in a worker thread so that a diff of two large, very different
// skills never stalls the dashboard's server; the server ends the thread when it takes too long.
// The patch is the one `unifiedDiff` (src/skill/document.ts) makes; this file is plain
// JavaScript because a worker thread does not load TypeScript.
import { parentPort, workerData } from 'node:worker_threads';
import { createTwoFilesPatch } from 'diff';

const { before, after, labels, context } = workerData;
parentPort.postMessage({
  patch: createTwoFilesPatch(labels.before, labels.after, before, after, undefined, undefined, { context }),
});
