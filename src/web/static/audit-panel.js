// The audit of a step's candidate (its audit.json): the lints before the gate, the second scorer
// and the probes of an accept after it; each check's verdict, and the evidence of those that did not pass.
import { h } from './util.js';

export function auditPanel(a) {
  if (!a) return null;
  if (a.verdict === 'pass') return h('div.sub#audit', `Audit: passed (${a.checks.map((c) => c.check).join(', ')})`);
  const where = (f) => `${f.file}:${f.line}${f.edit ? `, edit ${f.edit.index + 1} (${f.edit.op})` : ''}`;
  const what = (f) =>
    f.item ? `${f.kind} of ${f.split} item ${f.item}` : `mirrors the scorer's ${JSON.stringify(f.check)}`;
  return h(
    `div.panel#audit`,
    h('h3', `Audit: ${a.verdict}`),
    ...a.checks
      .filter((c) => c.verdict !== 'pass')
      .map((c) =>
        h(
          `div.callout${c.verdict === 'fail' ? '' : '.warn'}`,
          h('strong', `${c.check} ${c.verdict}: `),
          c.summary,
          h(
            'ul',
            c.findings
              .slice(0, 10)
              .map((f) =>
                f.note
                  ? h('li', `item ${f.item}: ${f.note}`)
                  : h('li', `${what(f)} at ${where(f)}: `, h('code', f.text)),
              ),
          ),
        ),
      ),
  );
}
