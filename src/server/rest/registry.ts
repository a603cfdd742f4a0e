import { randomUUID } from 'node:crypto';
import {
  compileFieldSelector,
  decodeEventJson,
  eventInvalidError,
  formatTime,
  generateName,
  jsonSyntaxError,
  newBadRequest,
  newInternalError,
  parseLabelSelector,
  prepareObjectMetaUpdate,
  validateEventCreateRequest,
  validateEventUpdateRequest,
} from '../../api/index.js';
import type { CoreEvent, EventApi, FieldError } from '../../api/index.js';
import type { Clock } from '../../internal/index.js';
import type { EventFilter, EventStore, Preconditions } from '../../storage/index.js';
import { applyPatch } from './patch.js';
import type { PatchType } from './patch.js';
import type { FieldValidation } from './query.js';
import { toStatusError } from './storage-errors.js';
import { encodeFor } from './views.js';

/** LOCAL_OCCURRENCE asks an archive-capable store to keep an occurrence of each observed change of a local write, seen at commit time. */
const LOCAL_OCCURRENCE = Object.freeze({});

/**
 * setOnCreate is kube-apiserver's test for a create that carries a
 * resourceVersion (its 500 `resourceVersion should not be set on objects to
 * be created`): one that parses as a non-zero unsigned 64-bit integer. Any
 * other value (`0`, `abc`, a NUL) is not a version to it, and the create goes on.
 */
function setOnCreate(rv: string | undefined): boolean {
  if (rv === undefined || !/^\d+$/.test(rv)) return false;
  const v = BigInt(rv);
  return v !== 0n && v <= 0xffff_ffff_ffff_ffffn;
}

/** WriteContext is what every write request carries besides its body. */
export interface WriteContext {
  api: EventApi;
  namespace: string;
  fieldValidation: FieldValidation;
  dryRun: boolean;
  /** privileged writers may set the archive's own `archive.kevents.io/*` labels and annotations. */
  privileged?: boolean;
}

/** WriteResult is a stored (or dry-run) object and the warnings for the `Warning` header. */
export interface WriteResult {
  object: CoreEvent;
  warnings: string[];
  created: boolean;
}

/** RegistryOptions configure an EventRegistry. */
export interface RegistryOptions {
  store: EventStore;
  /** eventTtlSeconds is `--event-ttl`; 0 keeps events forever. */
  eventTtlSeconds: number;
  clock: Clock;
}

/**
 * EventRegistry is the generic-registry logic of the events resource over an
 * EventStore: decoding, defaulting, validation and TTL for each verb, in the
 * order kube-apiserver applies them. It knows nothing of HTTP.
 */
export class EventRegistry {
  private readonly store: EventStore;
  private readonly ttl: number;
  private readonly clock: Clock;

  constructor(options: RegistryOptions) {
    this.store = options.store;
    this.ttl = options.eventTtlSeconds;
    this.clock = options.clock;
  }

  /** create decodes, validates and stores a new event (POST). */
  async create(text: string | Uint8Array, ctx: WriteContext): Promise<WriteResult> {
    const { event, warnings } = decodeEventJson(text, ctx.api, { fieldValidation: ctx.fieldValidation });
    reconcileNamespace(event, ctx.namespace);
    if (setOnCreate(event.metadata.resourceVersion)) {
      throw newInternalError(new Error('resourceVersion should not be set on objects to be created'));
    }
    const prepared = this.prepareCreate(event, ctx);
    if (ctx.dryRun) return { object: prepared, warnings, created: true };
    try {
      const object = await this.store.create(prepared, { ttlSeconds: this.ttl, occurrence: LOCAL_OCCURRENCE });
      return { object, warnings, created: true };
    } catch (e) {
      throw toStatusError(e, 'create', prepared.metadata.name, ctx.api);
    }
  }

  private prepareCreate(event: CoreEvent, ctx: WriteContext): CoreEvent {
    const meta = event.metadata;
    if ((meta.name === undefined || meta.name === '') && meta.generateName !== undefined && meta.generateName !== '') {
      meta.name = generateName(meta.generateName);
    }
    const errs = [...validateEventCreateRequest(event, ctx.api), ...reservedKeyErrors(event, undefined, ctx)];
    if (errs.length > 0) throw eventInvalidError(meta.name ?? '', errs);
    meta.uid = randomUUID();
    meta.creationTimestamp = formatTime(this.clock.now());
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.generation;
    delete meta.resourceVersion;
    return event;
  }

  /** get reads one event. */
  async get(namespace: string, name: string, api?: EventApi): Promise<CoreEvent> {
    try {
      return await this.store.get(namespace, name);
    } catch (e) {
      throw toStatusError(e, 'get', name, api);
    }
  }

  /** update replaces an event (PUT), creating it when it does not exist. */
  async update(text: string | Uint8Array, name: string, ctx: WriteContext): Promise<WriteResult> {
    const { event, warnings } = decodeEventJson(text, ctx.api, { fieldValidation: ctx.fieldValidation });
    reconcileNamespace(event, ctx.namespace);
    const bodyName = event.metadata.name ?? '';
    if (bodyName !== name) {
      throw newBadRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
    }
    const requestedRv = event.metadata.resourceVersion;
    const preconditions: Preconditions = {};
    if (requestedRv !== undefined && requestedRv !== '') preconditions.resourceVersion = requestedRv;
    const tryUpdate = (current: CoreEvent | undefined): CoreEvent => {
      const next = structuredClone(event);
      if (current === undefined) return this.prepareCreate(next, ctx);
      return this.prepareUpdate(next, current, ctx);
    };
    return this.write(ctx, name, tryUpdate, { allowCreate: true, preconditions }, warnings, 'update');
  }

  /** patch applies a JSON, merge or strategic merge patch to an event (PATCH). */
  async patch(patchText: string, type: PatchType, name: string, ctx: WriteContext): Promise<WriteResult> {
    let patchDoc: unknown;
    try {
      patchDoc = JSON.parse(patchText);
    } catch (e) {
      throw newBadRequest(`error decoding patch: ${jsonSyntaxError(patchText) ?? (e as Error).message}`);
    }
    // A patch that names a resourceVersion is a precondition on it, as upstream's patcher applies it.
    const patchRv = patchResourceVersion(patchDoc);
    const warnings: string[] = [];
    const tryUpdate = (current: CoreEvent | undefined): CoreEvent => {
      if (current === undefined) throw newInternalError(new Error('patch of a missing object'));
      const original = encodeFor(ctx.api, current);
      const patched = applyPatch(type, original, patchDoc);
      const decoded = decodeEventJson(JSON.stringify(patched), ctx.api, { fieldValidation: ctx.fieldValidation });
      warnings.splice(0, warnings.length, ...decoded.warnings);
      const next = decoded.event;
      reconcileNamespace(next, ctx.namespace);
      if ((next.metadata.name ?? '') !== name) {
        throw newBadRequest(`the name of the object (${next.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      }
      return this.prepareUpdate(next, current, ctx);
    };
    const preconditions: Preconditions = {};
    if (patchRv !== undefined) preconditions.resourceVersion = patchRv;
    return this.write(ctx, name, tryUpdate, { allowCreate: false, preconditions }, warnings, 'patch');
  }

  private async write(
    ctx: WriteContext,
    name: string,
    tryUpdate: (current: CoreEvent | undefined) => CoreEvent,
    opts: { allowCreate: boolean; preconditions: Preconditions },
    warnings: string[],
    verb: 'update' | 'patch',
  ): Promise<WriteResult> {
    if (ctx.dryRun) {
      let current: CoreEvent | undefined;
      try {
        current = await this.store.get(ctx.namespace, name);
      } catch (e) {
        const mapped = toStatusError(e, verb, name, ctx.api);
        if (!opts.allowCreate || (mapped as { status?: { reason?: string } }).status?.reason !== 'NotFound') throw mapped;
      }
      return { object: tryUpdate(current), warnings, created: current === undefined };
    }
    try {
      const result = await this.store.guaranteedUpdate(ctx.namespace, name, tryUpdate, {
        allowCreate: opts.allowCreate,
        preconditions: opts.preconditions,
        ttlSeconds: this.ttl,
        occurrence: LOCAL_OCCURRENCE,
      });
      return { object: result.object, warnings, created: result.created };
    } catch (e) {
      throw toStatusError(e, verb, name, ctx.api);
    }
  }

  private prepareUpdate(next: CoreEvent, current: CoreEvent, ctx: WriteContext): CoreEvent {
    next.metadata = prepareObjectMetaUpdate(next.metadata, current.metadata);
    // An unconditional update (no resourceVersion) is allowed for events: it
    // applies to whatever is stored, as upstream's registry does.
    if ((next.metadata.resourceVersion ?? '') === '') next.metadata.resourceVersion = current.metadata.resourceVersion;
    const errs = [...validateEventUpdateRequest(next, current, ctx.api), ...reservedKeyErrors(next, current, ctx)];
    if (errs.length > 0) throw eventInvalidError(next.metadata.name ?? '', errs);
    delete next.metadata.resourceVersion;
    return next;
  }

  /** delete removes one event and returns its last state. */
  async delete(namespace: string, name: string, preconditions: Preconditions, dryRun: boolean, api?: EventApi): Promise<CoreEvent> {
    try {
      if (dryRun) return await this.store.get(namespace, name);
      return await this.store.delete(namespace, name, { preconditions });
    } catch (e) {
      throw toStatusError(e, 'delete', name, api);
    }
  }
}

/** RESERVED_PREFIX marks the labels and annotations kevents writes itself: an archived event's cluster, its source's resourceVersion. */
export const RESERVED_PREFIX = 'archive.kevents.io/';

/** KEYED_FIELDS are the metadata maps whose `archive.kevents.io/*` keys are kept for privileged writers. */
const KEYED_FIELDS = ['labels', 'annotations'] as const;

/**
 * reservedKeyErrors refuses an `archive.kevents.io/*` label or annotation a write adds or changes,
 * unless its writer is privileged: anyone else could pose as a mirrored cluster (`cluster=prod`).
 * Keys the stored event already holds must stay as they are (archived events can still be updated).
 */
function reservedKeyErrors(next: CoreEvent, current: CoreEvent | undefined, ctx: WriteContext): FieldError[] {
  if (ctx.privileged === true) return [];
  const errs: FieldError[] = [];
  for (const field of KEYED_FIELDS) {
    // Most events carry neither: nothing to compare, nothing to allocate on the create path.
    if (next.metadata[field] === undefined && current?.metadata[field] === undefined) continue;
    const now = next.metadata[field] ?? {};
    const before = current?.metadata[field] ?? {};
    const keys = new Set([...Object.keys(now), ...Object.keys(before)]);
    for (const k of keys) {
      if (!k.startsWith(RESERVED_PREFIX) || before[k] === now[k]) continue;
      errs.push({
        type: 'FieldValueForbidden',
        field: `metadata.${field}[${k}]`,
        detail: `the ${RESERVED_PREFIX} prefix is kept for what kevents archives (writers in system:masters or kevents:archivers may set it)`,
      });
    }
  }
  return errs;
}

function patchResourceVersion(patch: unknown): string | undefined {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return undefined;
  const meta = (patch as { metadata?: unknown }).metadata;
  if (meta === null || typeof meta !== 'object') return undefined;
  const rv = (meta as { resourceVersion?: unknown }).resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

/** reconcileNamespace applies the URL's namespace to a body, as the generic registry does. */
export function reconcileNamespace(event: CoreEvent, namespace: string): void {
  const ns = event.metadata.namespace;
  if (ns === undefined || ns === '') event.metadata.namespace = namespace;
  else if (ns !== namespace) {
    throw newBadRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** compileFilter turns the selectors of a list or watch into a store filter. */
export function compileFilter(api: EventApi, namespace: string | undefined, fieldSelector: string, labelSelector: string): EventFilter & { hasSelectors: boolean } {
  // Upstream parses the label selector before the field selector, so a request
  // with two bad selectors reports the label error.
  const labels = labelSelector === '' ? undefined : parseLabelSelector(labelSelector);
  const fields = fieldSelector === '' ? undefined : compileFieldSelector(fieldSelector, api);
  const filter: EventFilter & { hasSelectors: boolean } = { hasSelectors: fields !== undefined || labels !== undefined };
  if (namespace !== undefined) filter.namespace = namespace;
  if (fields !== undefined) filter.fieldEquals = fields.equalities;
  if (fields !== undefined || labels !== undefined) {
    filter.predicate = (e: CoreEvent): boolean =>
      (fields === undefined || fields.matches(e)) && (labels === undefined || labels.matches(e.metadata.labels));
  }
  // Each field requirement an equality on an indexed field, each field once: the equalities and the labels are the whole selector.
  if (fields === undefined || Object.keys(fields.equalities).length === fields.requirements.length) {
    filter.predicateIsSelection = true;
    if (labels !== undefined) filter.labelMatch = (l) => labels.matches(l);
  }
  return filter;
}
