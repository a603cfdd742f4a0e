/**
 * CopyCommand shows a next step's command as text, with a button that copies
 * it. The server built the command with every value checked and quoted
 * (src/api/shell.ts); it is never parsed as HTML here.
 */
export function CopyCommand({ command }: { command: string }) {
  return (
    <div class="cmd">
      <code>{command}</code>
      <button type="button" class="copy" aria-label={`Copy: ${command}`} onClick={() => void navigator.clipboard?.writeText(command)}>
        Copy
      </button>
    </div>
  );
}
