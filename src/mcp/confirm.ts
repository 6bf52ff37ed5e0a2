/**
 * The consent gate of the tools that change the user's files or system (adopt, rollback,
 * schedule): the user confirms through the protocol's elicitation, in the agent's own interface.
 * A client that cannot ask is refused, unless the user's Sleep config says these tools may act
 * without asking (`mcp.act_without_confirmation: true`). The model driving the agent never
 * answers for the user: only an elicitation reply, which the client shows to the user, counts.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

export type Consent = { ok: true; how: 'confirmed' | 'configured' } | { ok: false; reason: string };

export async function confirmWithUser(
  server: Server,
  question: string,
  actWithoutConfirmation: boolean,
  signal?: AbortSignal,
): Promise<Consent> {
  if (!server.getClientCapabilities()?.elicitation) {
    if (actWithoutConfirmation) return { ok: true, how: 'configured' };
    return {
      ok: false,
      reason:
        'refused: this agent cannot ask you to confirm (no MCP elicitation support), and your Sleep config does not allow acting without confirmation. ' +
        'Run the matching `skillopt sleep` command in a terminal, or set mcp.act_without_confirmation: true in the Sleep config.',
    };
  }
  const reply = await server.elicitInput(
    {
      mode: 'form',
      message: question,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Go ahead', description: question } },
        required: ['confirm'],
      },
    },
    { signal },
  );
  if (reply.action === 'accept' && reply.content?.confirm === true) return { ok: true, how: 'confirmed' };
  return {
    ok: false,
    reason: `not done: you ${reply.action === 'accept' ? 'did not confirm' : reply.action === 'decline' ? 'declined' : 'cancelled'}`,
  };
}
