/**
 * The `kevents/recorder` package entry: the recorder, plus the sink that writes
 * through a @kubernetes/client-node KubeConfig (kept in src/client, since the
 * recorder itself depends on nothing but its own EventSink interface).
 */
export * from './recorder/index.js';
export { sinkFromKubeConfig, loadKubeConfig } from './client/index.js';
