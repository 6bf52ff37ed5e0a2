import { UserError } from '../errors.ts';

export interface DashboardOptions {
  roots: string[];
  host: string;
  port: number;
}

export async function serveDashboard(_opts: DashboardOptions): Promise<never> {
  throw new UserError('the dashboard is not part of this build yet');
}
