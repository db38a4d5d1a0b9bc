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
home=$(node -e 'const h=require("crypto").createHash("sha256").update("node dist/cli/main.js").digest("hex").slice(0,10);console.log(`bench/.work/questions/umbra-home-${h}`)')
echo "== today's code model"
UMBRA_HOME=$PWD/$home node bench/questions/inprocess.mjs | grep '^| all'
for mode in "${modes[@]}"; do
  out=bench/.work/semantic/home-$mode
  rm -rf "$out"
  for clone in bench/.work/repos/*; do
    id=$(node -e 'console.log(require("crypto").createHash("sha256").update(require("fs").realpathSync(process.argv[1])).digest("hex").slice(0,16))' "$clone")
    model=$home/workspaces/$id/index/code-model.bin
    [ -f "$model" ] || continue
    node bench/semantic/distill.mjs "$model" "$out/workspaces/$id/index/code-model.bin" "$mode" "$teacher" 2>&1 | tail -1
  done
  echo "== $mode"
  UMBRA_HOME=$PWD/$out node bench/questions/inprocess.mjs | grep '^| '
done
