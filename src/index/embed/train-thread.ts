/** Worker-thread entry: trains a code model from `workerData` and posts it back (see train.ts). */
import { parentPort, workerData } from "node:worker_threads";
import { trainCodeModel } from "./code-model.js";
import type { TrainRequest } from "./train.js";

const { documents, dimensions } = workerData as TrainRequest;
const model = trainCodeModel(documents, { dimensions });
parentPort?.postMessage(model);
