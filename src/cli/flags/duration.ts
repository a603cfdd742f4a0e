/** duration re-exports the Go duration syntax from src/api, where the archive's search query reads it too. */
export { formatGoDuration, parseGoDuration } from '../../api/index.js';
