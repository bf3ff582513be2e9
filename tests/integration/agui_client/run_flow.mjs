// Drives skilldeck web with the official AG-UI client: run -> interrupt (approval) ->
// resume -> interrupt (question) -> resume -> done. Prints one JSON report on stdout.
import { HttpAgent } from "@ag-ui/client";

const [base, task] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/agui`, threadId: "client-thread-1" });
const seen = [];
const subscriber = { onEvent: ({ event }) => { seen.push(event.type); } };
const steps = [];

agent.addMessage({ id: "user-1", role: "user", content: task });
await agent.runAgent({}, subscriber);
steps.push(agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason })));

await agent.runAgent(
  { resume: [{ interruptId: "write-1", status: "resolved", payload: { approve: true } }] },
  subscriber,
);
steps.push(agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason })));

await agent.runAgent(
  { resume: [{ interruptId: "ask-1", status: "resolved", payload: { answer: "Friendly" } }] },
  subscriber,
);
steps.push(agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason })));

const texts = agent.messages.filter((m) => m.role === "assistant" && m.content).map((m) => m.content);
console.log(JSON.stringify({ steps, seen, texts, state: agent.state }));
