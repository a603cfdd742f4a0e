/**
 * The OpenAPI v2 document as gnostic protobuf, which kubectls older than v3 support read at
 * `/openapi/v2`: encoded from the v3 documents' paths, apart from them because it is a wire format
 * of its own.
 */
import { openApiV3Specs } from './openapi.js';
import type { Parameter } from './openapi-paths.js';
import type { Schema } from './openapi-schemas.js';
// Protocol buffer wire encoding, just enough for the gnostic OpenAPI v2 messages below.
class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private varint(n: number): void {
    const bytes: number[] = [];
    let v = n;
    while (v > 0x7f) {
      bytes.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.parts.push(Buffer.from(bytes));
  }

  string(field: number, value: string | undefined): this {
    if (value === undefined || value === '') return this;
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  bool(field: number, value: boolean | undefined): this {
    if (value !== true) return this;
    this.varint((field << 3) | 0);
    this.varint(1);
    return this;
  }

  bytes(field: number, value: Buffer): this {
    this.varint((field << 3) | 2);
    this.varint(value.length);
    this.parts.push(value);
    return this;
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// gnostic openapi_v2 field numbers (github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto).
const PB = {
  document: { swagger: 1, info: 2, paths: 8 },
  info: { title: 1, version: 2 },
  paths: { path: 2 },
  namedPathItem: { name: 1, value: 2 },
  pathItem: { parameters: 9 },
  pathItemOperation: { get: 2, put: 3, post: 4, delete: 5, patch: 8 } as Record<string, number>,
  operation: { tags: 1, description: 3, operationId: 5, produces: 6, consumes: 7, parameters: 8, responses: 9, vendorExtension: 13 },
  parametersItem: { parameter: 1 },
  parameter: { nonBody: 2 },
  nonBody: { query: 3, path: 4 },
  query: { required: 1, in: 2, description: 3, name: 4, type: 6, uniqueItems: 20 },
  path: { required: 1, in: 2, description: 3, name: 4, type: 5, uniqueItems: 19 },
  responses: { responseCode: 1 },
  namedResponseValue: { name: 1, value: 2 },
  responseValue: { response: 1 },
  response: { description: 1 },
  namedAny: { name: 1, value: 2 },
  any: { yaml: 2 },
};

// Writes one ParametersItem (at `field` of its parent) holding a non-body parameter.
function writeParameter(w: ProtoWriter, field: number, p: Parameter): void {
  const f = p.in === 'path' ? PB.path : PB.query;
  const type = typeof p.schema.type === 'string' ? p.schema.type : undefined;
  w.message(field, (item) =>
    item.message(PB.parametersItem.parameter, (param) =>
      param.message(PB.parameter.nonBody, (nb) =>
        nb.message(p.in === 'path' ? PB.nonBody.path : PB.nonBody.query, (sub) =>
          sub
            .bool(f.required, p.required)
            .string(f.in, p.in)
            .string(f.description, p.description)
            .string(f.name, p.name)
            .string(f.type, type)
            .bool(f.uniqueItems, p.schema.uniqueItems === true),
        ),
      ),
    ),
  );
}

function yamlOf(value: unknown): string {
  if (typeof value === 'string') return `${value}\n`;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`).join('');
}

function writeOperation(w: ProtoWriter, op: Schema): void {
  const o = PB.operation;
  for (const t of (op.tags ?? []) as string[]) w.string(o.tags, t);
  w.string(o.description, op.description as string | undefined);
  w.string(o.operationId, op.operationId as string | undefined);
  const responses = (op.responses ?? {}) as Record<string, { description: string; content?: Record<string, unknown> }>;
  const produces = new Set(Object.values(responses).flatMap((r) => Object.keys(r.content ?? {})));
  for (const t of produces) w.string(o.produces, t);
  const body = op.requestBody as { content: Record<string, unknown> } | undefined;
  for (const t of Object.keys(body?.content ?? {})) w.string(o.consumes, t);
  for (const p of (op.parameters ?? []) as Parameter[]) writeParameter(w, o.parameters, p);
  w.message(o.responses, (rs) => {
    for (const [code, r] of Object.entries(responses)) {
      rs.message(PB.responses.responseCode, (nr) =>
        nr
          .string(PB.namedResponseValue.name, code)
          .message(PB.namedResponseValue.value, (rv) =>
            rv.message(PB.responseValue.response, (resp) => resp.string(PB.response.description, r.description)),
          ),
      );
    }
  });
  for (const name of ['x-kubernetes-action', 'x-kubernetes-group-version-kind']) {
    if (op[name] === undefined) continue;
    w.message(o.vendorExtension, (na) =>
      na.string(PB.namedAny.name, name).message(PB.namedAny.value, (a) => a.string(PB.any.yaml, yamlOf(op[name]))),
    );
  }
}

/**
 * openApiV2Protobuf returns `GET /openapi/v2` in the protobuf form kubectl 1.27 and 1.28 ask
 * for (`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`) before `create -f`.
 * It carries the paths and operations of every served group/version, with their query and
 * path parameters and extensions, which is what those clients read to decide that the server
 * validates fields; schema definitions and body parameters are left out (the OpenAPI v3
 * documents carry them, and those kubectls read v3 for `explain`).
 */
export function openApiV2Protobuf(): Buffer {
  cachedV2 ??= buildOpenApiV2Protobuf();
  return cachedV2;
}

let cachedV2: Buffer | undefined;

/** OPENAPI_V2_PROTOBUF_CONTENT_TYPE is the Content-Type kube-apiserver answers `/openapi/v2` protobuf with. */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

function buildOpenApiV2Protobuf(): Buffer {
  const paths: Array<[string, Schema]> = [];
  for (const spec of openApiV3Specs().values()) paths.push(...Object.entries(spec.document.paths));
  paths.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const w = new ProtoWriter();
  w.string(PB.document.swagger, '2.0');
  w.message(PB.document.info, (i) => i.string(PB.info.title, 'Kubernetes').string(PB.info.version, 'unversioned'));
  w.message(PB.document.paths, (ps) => {
    for (const [name, item] of paths) {
      ps.message(PB.paths.path, (np) =>
        np.string(PB.namedPathItem.name, name).message(PB.namedPathItem.value, (pi) => {
          for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
            const op = item[method] as Schema | undefined;
            const field = PB.pathItemOperation[method];
            if (op !== undefined && field !== undefined) pi.message(field, (ow) => writeOperation(ow, op));
          }
          for (const p of (item.parameters ?? []) as Parameter[]) writeParameter(pi, PB.pathItem.parameters, p);
        }),
      );
    }
  });
  return w.finish();
}
