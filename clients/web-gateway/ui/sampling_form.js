// The one form a person answers a sampling/createMessage with: the request
// shown (system prompt, messages, maxTokens), a reply and a model name,
// Send and Reject. The Pending view uses it for what servers ask; the MCP
// Apps host (apps.js) for what an App asks. Each caller says what sending
// and rejecting do; an error sending throws is shown in the form, one
// rejecting throws in a toast.
import { h, clear, field, errorBox, pretty, actionButton } from './util.js';

/**
 * @param {string} label the form's accessible name
 * @param {any} params the request's params
 * @param {{reply: (result: any) => Promise<any>, reject: () => Promise<any>,
 *          sendLabel?: string, rejectLabel?: string}} actions
 * @returns {HTMLFormElement}
 */
export function samplingForm(label, params, actions) {
  const messages = (params.messages || []).map((m) => {
    const c = Array.isArray(m.content) ? m.content : [m.content || {}];
    return h('div', { class: `message role-${m.role}` }, h('div', { class: 'role' }, m.role),
      c.map((x) => (x.type === 'text' ? h('pre', { class: 'text-content' }, x.text) : h('pre', { class: 'json' }, pretty(x)))));
  });
  const reply = h('textarea', { rows: 4 });
  const model = h('input', { type: 'text', value: 'web-ui' });
  const errors = h('div', {});
  const f = /** @type {HTMLFormElement} */ (h('form', { class: 'sampling-form', 'aria-label': label },
    params.systemPrompt ? h('p', { class: 'muted' }, `System prompt: ${params.systemPrompt}`) : null,
    messages,
    h('p', { class: 'muted' }, `maxTokens ${params.maxTokens ?? '—'}`),
    field('Reply (assistant text)', reply), field('Model name', model), errors,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, actions.sendLabel || 'Send reply'),
      actionButton(actions.rejectLabel || 'Reject', () => actions.reject()))));
  f.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await actions.reply({
        role: 'assistant', content: { type: 'text', text: reply.value }, model: model.value || 'web-ui', stopReason: 'endTurn',
      });
    } catch (error) {
      clear(errors, errorBox(error));
    }
  });
  return f;
}
