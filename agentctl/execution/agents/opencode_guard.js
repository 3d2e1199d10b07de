// agentctl's guard inside opencode: every tool call is asked of the attempt before it runs and
// reported after, over the attempt's unix socket with the hooks' key (one JSON line each way,
// as agentctl's hook command speaks). agentctl copies this file into its private
// OPENCODE_CONFIG_DIR/plugins/ and writes the attempt's settings beside it; it has no
// dependencies, so opencode loads it offline.
//
// It fails closed. A call is denied (thrown) on any error: no settings, no attempt listening,
// no answer within the deadline, an answer that is not an allow. And every model request gets
// the attempt's guard nonce from `chat.headers` here, without which agentctl's gateway forwards
// nothing: if this plugin fails to load (opencode then skips it silently), no model request is
// answered, and no tool call can happen unguarded.

import { readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SETTINGS = "agentctl-guard.json"; // in OPENCODE_CONFIG_DIR, beside plugins/
const CONNECT_MS = 10_000;
const REPLY_MS = 3_600_000; // an `ask` rule in an interactive run waits for a person
const ACK_MS = 60_000;
const MAX_BYTES = 16 * 1024 * 1024;

function settings() {
  const path = join(dirname(dirname(fileURLToPath(import.meta.url))), SETTINGS);
  let value;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`agentctl guard: cannot read its settings ${path}: ${error.message}`);
  }
  if (value === null || typeof value !== "object") {
    throw new Error(`agentctl guard: ${path} is not a JSON object`);
  }
  for (const name of ["socket", "attempt", "key", "guard"]) {
    if (typeof value[name] !== "string" || value[name] === "") {
      throw new Error(`agentctl guard: ${SETTINGS} has no ${name}`);
    }
  }
  return value;
}

// One request line to the attempt, one answer line back, as an object; rejects on any error.
function exchange(config, event, input, replyMs) {
  const request = JSON.stringify({
    attempt: config.attempt, key: config.key, agent: "opencode", event, input,
  }) + "\n";
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let settled = false;
    const socket = createConnection({ path: config.socket });
    const finish = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    let timer = setTimeout(() => finish(new Error(
      `cannot reach the attempt at ${config.socket} within ${CONNECT_MS / 1000} s`)), CONNECT_MS);
    socket.on("connect", () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new Error(
        `the attempt gave no answer within ${replyMs / 1000} s`)), replyMs);
      socket.write(request);
    });
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_BYTES) return finish(new Error("the attempt's answer is too large"));
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\n");
      if (end < 0) return;
      try {
        const answer = JSON.parse(text.slice(0, end));
        if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
          throw new Error("not a JSON object");
        }
        finish(null, answer);
      } catch (error) {
        finish(new Error(`the attempt's answer is unreadable: ${error.message}`));
      }
    });
    socket.on("error", (error) => finish(new Error(
      `cannot reach the attempt at ${config.socket}: ${error.message} (the run is over or was killed)`)));
    socket.on("close", () => finish(new Error("the attempt closed the connection with no answer")));
  });
}

function denied(reason) {
  return new Error(`agentctl: denied: ${String(reason).split(/\s+/).join(" ").slice(0, 2000)}`);
}

// The answer to a result or the session's start: an acknowledgement, else an error.
async function acknowledged(config, event, input) {
  const answer = await exchange(config, event, input, ACK_MS);
  if (answer.ok !== true) throw denied(answer.reason || `the attempt refused the ${event}`);
}

export const AgentctlGuard = async () => {
  const config = settings();
  // a call's own arguments, by call id, where the attempt replaced them: opencode keeps the
  // replacement in its history, and its model is shown its own command instead
  const originals = new Map();
  // the guard is live in this process: the attempt notes it before any model request
  await acknowledged(config, "SessionStart", { hook_event_name: "SessionStart" });
  return {
    "tool.execute.before": async (input, output) => {
      let answer;
      try {
        answer = await exchange(config, "PreToolUse", {
          hook_event_name: "PreToolUse", tool_name: input.tool, tool_input: output.args ?? {},
          tool_use_id: input.callID,
        }, REPLY_MS);
      } catch (error) {
        throw denied(error.message);
      }
      if (answer.refused || answer.decision !== "allow") {
        throw denied(answer.reason || "the attempt gave no decision");
      }
      if (answer.updatedInput !== undefined && answer.updatedInput !== null) {
        let replaced;
        try {
          replaced = JSON.parse(answer.updatedInput);
        } catch (error) {
          throw denied(`the attempt's replacement input is unreadable: ${error.message}`);
        }
        if (replaced === null || typeof replaced !== "object" || Array.isArray(replaced)
            || output.args === null || typeof output.args !== "object") {
          throw denied("the attempt's replacement input is not a JSON object");
        }
        // in place: opencode runs the tool with this very object
        originals.set(input.callID, { ...output.args });
        for (const name of Object.keys(output.args)) {
          if (!(name in replaced)) delete output.args[name];
        }
        Object.assign(output.args, replaced);
      }
    },
    "tool.execute.after": async (input, output) => {
      try {
        await acknowledged(config, "PostToolUse", {
          hook_event_name: "PostToolUse", tool_name: input.tool, tool_input: input.args ?? {},
          tool_use_id: input.callID,
          // the PostToolUse shape agentctl reads: the text, and a command's exit code
          tool_response: { output: output?.output ?? "", exit_code: output?.metadata?.exit },
        });
      } catch (error) {
        throw denied(error.message);
      }
    },
    "experimental.chat.messages.transform": async (_input, output) => {
      for (const message of output?.messages ?? []) {
        for (const part of message?.parts ?? []) {
          if (part?.type === "tool" && part.state && originals.has(part.callID)) {
            part.state = { ...part.state, input: originals.get(part.callID) };
          }
        }
      }
    },
    "chat.headers": async (_input, output) => {
      output.headers["x-agentctl-guard"] = config.guard;
    },
  };
};
