import { describe, expectTypeOf, it } from "vitest";
import type { ResultOf } from "../../src/engine/api.js";
import type * as Wire from "../../ui/src/wire.js";

// The page is a program of its own (built for the browser, apart from the engine), so it names the
// fields it reads in ui/src/wire.ts. These checks (run by the type check of `npm test`) hold that what
// the engine answers is what the page reads: a field renamed or retyped in src/engine/api.ts fails here.

describe("the page's view of the API", () => {
  it("reads the shapes the engine answers", () => {
    expectTypeOf<ResultOf<"branchList">["branches"][number]>().toExtend<Wire.Branch>();
    expectTypeOf<ResultOf<"diff">>().toExtend<Wire.DiffAnswer>();
    expectTypeOf<ResultOf<"lints">>().toExtend<Wire.LintsAnswer>();
    expectTypeOf<ResultOf<"accept">>().toExtend<Wire.AcceptAnswer>();
    expectTypeOf<ResultOf<"undo">>().toExtend<Wire.UndoAnswer>();
    expectTypeOf<ResultOf<"search">["hits"][number]>().toExtend<Wire.SearchHit>();
    expectTypeOf<ResultOf<"sessionList">["sessions"][number]>().toExtend<Wire.SessionSummary>();
    expectTypeOf<ResultOf<"sessionGet">>().toExtend<Wire.SessionDetail>();
    expectTypeOf<ResultOf<"approvalList">["approvals"][number]>().toExtend<Wire.Approval>();
    expectTypeOf<ResultOf<"ruleList">["rules"][number]>().toExtend<Wire.Rule>();
    expectTypeOf<ResultOf<"evalList">["runs"][number]>().toExtend<Wire.EvalRun>();
    expectTypeOf<ResultOf<"evalCompare">>().toExtend<Wire.Comparison>();
  });

  it("sends the resolutions the engine takes", () => {
    expectTypeOf<Wire.Resolution>().toExtend<
      NonNullable<import("../../src/engine/api.js").ParamsOf<"accept">["resolve"]>[number]
    >();
  });
});
