export * from './recorder/index.js';
export { createEventsClient, sinkFromKubeConfig, type EventsClient, type EventsClientOptions } from './client/index.js';
