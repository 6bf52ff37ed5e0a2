/**
 * A deterministic stand-in for both models of a SpreadsheetBench training run, answering OpenAI
 * Chat Completions request bodies:
 * - the target writes openpyxl scripts for two kinds of instruction. It writes formulas into the
 *   answer cells (which hold no saved value, so they read as empty) unless the skill tells it to
 *   write values, or feedback names its cells as wrong; for the counting task its first script
 *   opens a sheet that does not exist, and the error fed back makes it use the right one;
 * - the optimizer (requests that ask for a JSON schema) proposes the values rule while the skill
 *   shown to it lacks it, and answers the other optimizer calls plainly.
 */
import { skillInPrompt } from '../helpers/fake-skillopt-responder.ts';

export const VALUES_RULE =
  'Write the computed values into the answer cells, never formulas: the check reads the values a workbook has saved.';
const KNOWS_VALUES = /never formulas/i;

export const TOTAL = 'Put the total of columns A and B of each row in column C.';
export const COUNT = 'In cell E1, put how many rows have an amount above 10 in column B.';

function script(kind: 'total' | 'count', values: boolean, sheet: string): string {
  const head = [
    'import openpyxl',
    'wb = openpyxl.load_workbook(INPUT_PATH)',
    `ws = wb['${sheet}']`,
    'last = ws.max_row',
  ];
  const body =
    kind === 'total'
      ? [
          'for r in range(2, last + 1):',
          values
            ? '    ws.cell(r, 3).value = ws.cell(r, 1).value + ws.cell(r, 2).value'
            : "    ws.cell(r, 3).value = f'=A{r}+B{r}'",
        ]
      : [
          values
            ? "ws['E1'] = sum(1 for r in range(2, last + 1) if (ws.cell(r, 2).value or 0) > 10)"
            : "ws['E1'] = f'=COUNTIF(B2:B{last},\">10\")'",
        ];
  return [...head, ...body, 'wb.save(OUTPUT_PATH)'].join('\n');
}

type Body = { messages: { role: string; content: unknown }[]; response_format?: { json_schema?: { name?: string } } };
const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text?: string }[]).map((p) => p.text ?? '').join(''));

export function spreadsheetResponder(body: Body): { text: string; usage: { input: number; output: number } } {
  const system = text(body.messages.find((m) => m.role === 'system')?.content ?? '');
  const users = body.messages.filter((m) => m.role === 'user').map((m) => text(m.content));
  const usage = { input: Math.ceil((system.length + users.join('').length) / 4), output: 60 };
  const schema = body.response_format?.json_schema?.name;
  if (!schema) {
    const kind = users[0]!.includes(COUNT) ? 'count' : 'total';
    const fedBack = users.slice(1);
    const values = KNOWS_VALUES.test(system) || fedBack.some((f) => /your value =/.test(f));
    const sheet =
      kind === 'count' && !fedBack.some((f) => /Worksheet Sheet1 does not exist/.test(f)) ? 'Sheet1' : 'Data';
    return { text: `\`\`\`python\n${script(kind, values, sheet)}\n\`\`\``, usage };
  }
  const skill = skillInPrompt(users.at(-1) ?? '');
  const edits = KNOWS_VALUES.test(skill) ? [] : [{ op: 'append', content: `\n## Answer cells\n- ${VALUES_RULE}` }];
  const reply = (value: unknown) => ({ text: JSON.stringify(value), usage });
  if (schema.startsWith('analyst_'))
    return reply({ failure_summary: [], success_patterns: [], patch: { reasoning: 'formulas read as empty', edits } });
  if (schema === 'merged_patch') return reply({ reasoning: 'merged', edits });
  if (schema === 'ranking') return reply({ reasoning: 'in order', selected_indices: [0, 1, 2] });
  if (schema === 'learning_rate') return reply({ learning_rate: 1, reasoning: '' });
  if (schema === 'slow_update') return reply({ reasoning: '', slow_update_content: '' });
  if (schema === 'meta_skill') return reply({ reasoning: '', meta_skill_content: '' });
  if (schema === 'appendix_notes') return reply({ appendix_notes: [] });
  if (schema === 'rewrite') return reply({ reasoning: '', new_skill: `${skill}\n${VALUES_RULE}` });
  return reply({});
}
