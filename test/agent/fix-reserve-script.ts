import { DEMO_TASK, DEMO_TEST_COMMAND } from "../../src/cli/demo-command.js";
import type { FakeAction } from "../fakes/fake-openai.js";

/** The test command of examples/: the doctest of inventory/stock.py. */
export const EXAMPLES_TEST_COMMAND = DEMO_TEST_COMMAND;

export const FIX_RESERVE_TASK = DEMO_TASK;

/**
 * A whole task, answered by hand (no model wrote this): search, read, run the failing test, a wrong edit
 * that the lint feedback catches, the fix, the passing test, a summary. Answer n goes to request n.
 */
export const FIX_RESERVE_SCRIPT: FakeAction[] = [
  {
    text: "Let me find where stock is reserved.",
    toolCalls: [
      {
        id: "call_search",
        name: "search_code",
        input: { query: "reserve stock OutOfStock on hand", limit: 3 },
      },
    ],
    usage: { input: 900, output: 40 },
  },
  {
    toolCalls: [{ id: "call_read", name: "read_file", input: { path: "inventory/stock.py" } }],
    usage: { input: 1100, output: 30 },
  },
  {
    text: "The docstring has a test; run it first.",
    toolCalls: [
      {
        id: "call_test1",
        name: "run_command",
        input: { command: "python3 -B -m doctest inventory/stock.py" },
      },
    ],
    usage: { input: 1700, output: 40 },
  },
  {
    text: "The check refuses a reservation equal to what is available: `<=` should be `<`.",
    toolCalls: [
      {
        id: "call_edit1",
        name: "edit",
        input: {
          path: "inventory/stock.py",
          search: "        if self.available(sku) <= quantity:",
          replace: "        if self.available(sku) < wanted:",
        },
      },
    ],
    usage: { input: 2100, output: 60 },
  },
  {
    text: "Wrong name; the parameter is `quantity`.",
    toolCalls: [
      {
        id: "call_edit2",
        name: "edit",
        input: {
          path: "inventory/stock.py",
          search: "        if self.available(sku) < wanted:",
          replace: "        if self.available(sku) < quantity:",
        },
      },
    ],
    usage: { input: 2300, output: 50 },
  },
  {
    toolCalls: [
      {
        id: "call_test2",
        name: "run_command",
        input: { command: "python3 -B -m doctest inventory/stock.py" },
      },
    ],
    usage: { input: 2500, output: 30 },
  },
  {
    text: "Fixed the off-by-one in Stock.reserve: a reservation may take everything that is available (`<` instead of `<=`). The doctest passes.",
    usage: { input: 2700, output: 40 },
  },
];
