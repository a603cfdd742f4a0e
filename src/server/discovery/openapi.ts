/**
 * OpenAPI v3 documents of the served group/versions, as kube-apiserver publishes them under
 * `/openapi/v3`. kubectl reads them for `explain` and, for `create -f` with validation on, to
 * learn from the PATCH operation of a kind whether the server validates fields itself.
 *
 * This file serves them (each document built once, its bytes hashed, the index); the data they
 * hold is generated in `openapi-schemas.ts` and `openapi-paths.ts`, and the OpenAPI v2 protobuf
 * older kubectls read is encoded in `openapi-v2.ts`.
 */
import { createHash } from 'node:crypto';
import { servedGroupVersions } from './discovery.js';
import type { GroupVersion } from './discovery.js';
import { pathPrefix, pathsOf, reachableSchemas } from './openapi-paths.js';
import { allSchemas } from './openapi-schemas.js';
import type { Schema } from './openapi-schemas.js';

/** specHash is how kube-openapi names a document version: upper-case hex sha512 of its bytes. */
export function specHash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}
/** OpenApiV3Document is an OpenAPI 3.0 document of one group/version. */
export interface OpenApiV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, Schema>;
  components: { schemas: Record<string, Schema> };
}

/** OpenApiV3Spec is one served document with its exact bytes and their hash. */
export interface OpenApiV3Spec {
  /** path is the key of the `/openapi/v3` index: `api/v1`, `apis/events.k8s.io/v1`. */
  path: string;
  document: OpenApiV3Document;
  /** json is the body to send; the hash names these exact bytes. */
  json: string;
  hash: string;
  /** serverRelativeURL is where the index points clients: `/openapi/v3/<path>?hash=<hash>`. */
  serverRelativeURL: string;
}

/** openApiV3Path is the index key of a group/version: `api/v1` or `apis/<group>/<version>`. */
export function openApiV3Path(gv: GroupVersion): string {
  return pathPrefix(gv).slice(1);
}

/**
 * buildOpenApiV3Specs builds every served OpenAPI v3 document afresh; servers use the
 * memoized openApiV3Specs.
 */
export function buildOpenApiV3Specs(): Map<string, OpenApiV3Spec> {
  const all = allSchemas();
  const specs = new Map<string, OpenApiV3Spec>();
  for (const gv of servedGroupVersions()) {
    const paths = pathsOf(gv);
    const document: OpenApiV3Document = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'unversioned' },
      paths,
      components: { schemas: reachableSchemas(paths, all) },
    };
    const path = openApiV3Path(gv);
    const json = JSON.stringify(document);
    const hash = specHash(json);
    specs.set(path, { path, document, json, hash, serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` });
  }
  return specs;
}

let cached: Map<string, OpenApiV3Spec> | undefined;

/**
 * openApiV3Specs returns every served OpenAPI v3 document by its index path. The documents
 * are static, so they are built once.
 */
export function openApiV3Specs(): ReadonlyMap<string, OpenApiV3Spec> {
  cached ??= buildOpenApiV3Specs();
  return cached;
}

/** openApiV3Spec returns the document served at `/openapi/v3/<path>`, or undefined. */
export function openApiV3Spec(path: string): OpenApiV3Spec | undefined {
  return openApiV3Specs().get(path.replace(/^\/+/, '').replace(/^openapi\/v3\//, ''));
}

/** OpenApiV3Index is the body of `GET /openapi/v3`. */
export interface OpenApiV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

/** openApiV3Index returns the body of `GET /openapi/v3`, keys sorted as Go encodes a map. */
export function openApiV3Index(): OpenApiV3Index {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of [...openApiV3Specs().keys()].sort()) {
    const spec = openApiV3Specs().get(key);
    if (spec !== undefined) paths[key] = { serverRelativeURL: spec.serverRelativeURL };
  }
  return { paths };
}
