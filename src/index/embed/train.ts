/**
 * Training the code model without blocking the event loop: it runs for seconds to tens of seconds on a
 * real repository, and on the main thread a Ctrl-C would wait for it. In a worker thread it is stopped
 * at once through an AbortSignal (the worker is terminated).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type CodeModel, trainCodeModel } from "./code-model.js";
import { abortReason } from "./embedder.js";

/** What the training thread is given. */
export interface TrainRequest {
  documents: string[];
  dimensions: number;
}

const THREAD = new URL("./train-thread.js", import.meta.url);

/**
 * Trains a code model in a worker thread; rejects with the signal's reason as soon as it aborts. Where the
 * compiled worker is not beside this module (running from the TypeScript sources), it trains on this thread.
 */
export async function trainCodeModelOffThread(
  request: TrainRequest,
  signal?: AbortSignal,
): Promise<CodeModel> {
  signal?.throwIfAborted();
  if (!existsSync(fileURLToPath(THREAD)))
    return trainCodeModel(request.documents, { dimensions: request.dimensions });
  const worker = new Worker(THREAD, { workerData: request });
  return new Promise<CodeModel>((resolve, reject) => {
    const onAbort = () => {
      reject(abortReason(signal as AbortSignal));
      void worker.terminate();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal?.removeEventListener("abort", onAbort);
    worker.once("message", (model: CodeModel) => {
      settle();
      resolve(model);
    });
    worker.once("error", (error) => {
      settle();
      reject(error);
    });
    worker.once("exit", (code) => {
      settle();
      reject(new Error(`code model training stopped (thread exit ${code})`));
    });
  });
}
