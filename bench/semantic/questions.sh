#!/usr/bin/env bash
# The teacher-distilled code models on the questions benchmark (bench/questions, a development set): each
# repository's trained code model (from run.mjs's index) rewritten by distill.mjs in each MODE into a
# data dir of its own, indexed there with that model (an index keeps a code model it finds) and searched
# in process, beside today's code model.
#
#   bash bench/semantic/questions.sh TEACHER_NODE_MODULES [MODE]...   (default modes: pieces pieces-blend)
#
# Needs `npm run build`, a run of `node bench/questions/run.mjs` (its index and working clones) and the
# teacher installed as README.md here says.
set -euo pipefail
cd "$(dirname "$0")/../.."
teacher=${1:?usage: questions.sh TEACHER_NODE_MODULES [MODE]...}
shift
if [ $# -gt 0 ]; then modes=("$@"); else modes=(pieces pieces-blend); fi
# the index folder umbra keeps for a clone under the data dir $1 (config/paths.js's workspaceDir)
index_of() {
  UMBRA_HOME=$1 node --input-type=module -e 'import { realpathSync } from "node:fs";
import { workspaceDir } from "./dist/config/paths.js";
console.log(`${workspaceDir(realpathSync(process.argv[1]))}/index`);' "$2"
}
# run.mjs's data dir for its default command (bench/questions/home.mjs)
home=$(node --input-type=module -e 'import { umbraHome } from "./bench/questions/home.mjs";
console.log(umbraHome(process.argv[1]));' "$PWD/bench/.work")
echo "== today's code model"
UMBRA_HOME=$home node bench/questions/inprocess.mjs | grep '^| all'
for mode in "${modes[@]}"; do
  out=$PWD/bench/.work/semantic/home-$mode
  rm -rf "$out"
  for clone in bench/.work/repos/*; do
    model=$(index_of "$home" "$clone")/code-model.bin
    [ -f "$model" ] || continue
    node bench/semantic/distill.mjs "$model" "$(index_of "$out" "$clone")/code-model.bin" "$mode" "$teacher" 2>&1 | tail -1
  done
  echo "== $mode"
  UMBRA_HOME=$out node bench/questions/inprocess.mjs | grep '^| '
done
