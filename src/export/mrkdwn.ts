/**
 * escapeMrkdwn escapes what Slack's mrkdwn reads as control characters: `&`, `<`
 * and `>`. With them escaped, event text cannot write a mention (`<!channel>`,
 * `<@U123>`, `<!subteam^S1>`), a link with a label of its choosing
 * (`<https://evil.example|docs>`) or an entity; it shows as written.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
