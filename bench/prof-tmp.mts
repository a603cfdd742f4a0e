import { runWrk } from './support/wrk.js';
const r = await runWrk('https://127.0.0.1:18090/api/v1/namespaces/bench/events', { seconds: 12, connections: 64, namespace: 'bench', token: 'tok0123456789' });
console.log(JSON.stringify(r));
process.exit(0);
