export * from './etcd-event-store.js';
export * from './options.js';
export { etcdEndpointsFromUrl } from './driver.js';
