/** The agents a skill can be deployed to, and where: a project's skill folder or the user's own. Kept free of imports: the command line's choices come from here. */
export const DEPLOY_AGENTS = ['claude', 'codex', 'copilot', 'cursor', 'agents'] as const;
export type DeployAgent = (typeof DEPLOY_AGENTS)[number];

export type Scope = { project: string } | { user: true };
