import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { buildSchema, type DocumentNode, Kind, parse, validate } from 'graphql';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { codegenConfig } from '../../codegen.js';

/**
 * examples/operations/*.graphql are what a frontend developer copies: they
 * must stay valid against the emitted schema, and graphql-codegen's client
 * preset must turn them into typed operations that compile.
 */
const DIR = 'examples/operations';
const schema = buildSchema(readFileSync('schema/schema.graphql', 'utf8'));
const files = readdirSync(DIR).filter((f) => f.endsWith('.graphql'));
const documents = new Map<string, DocumentNode>(files.map((f) => [f, parse(readFileSync(join(DIR, f), 'utf8'))]));

const operationsOf = (doc: DocumentNode) =>
  doc.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION ? [{ name: d.name?.value, type: d.operation }] : []));

describe('example GraphQL operations', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'booking-codegen-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('cover the booking flow, a CRM dashboard and the live calendar', () => {
    expect(files.sort()).toEqual(['booking-flow.graphql', 'crm-dashboard.graphql', 'live-calendar.graphql']);
    const all = [...documents.values()].flatMap(operationsOf);
    expect(all.every((op) => op.name)).toBe(true);
    expect(new Set(all.map((op) => op.name)).size).toBe(all.length);
    const names = (file: string) => operationsOf(documents.get(file)!).map((op) => `${op.type} ${op.name}`);
    expect(names('booking-flow.graphql')).toEqual(
      expect.arrayContaining(['query WeekOfSlots', 'mutation HoldSlot', 'mutation CompleteBooking']),
    );
    expect(names('crm-dashboard.graphql')).toEqual(expect.arrayContaining(['query ProviderAppointments', 'subscription AppointmentChanges']));
    expect(names('live-calendar.graphql')).toEqual(expect.arrayContaining(['query LiveCalendarWeek', 'subscription CapacityChanges']));
  });

  it.each(files)('%s is valid against schema/schema.graphql', (file) => {
    expect(validate(schema, documents.get(file)!).map((e) => e.message)).toEqual([]);
  });

  it('graphql-codegen (client preset) generates typed operations that compile', async () => {
    await generate({ ...codegenConfig(`${outDir}/`), cwd: process.cwd() }, true);
    const generated = readdirSync(outDir).filter((f) => f.endsWith('.ts'));
    expect(generated).toEqual(expect.arrayContaining(['graphql.ts', 'gql.ts', 'index.ts']));
    const types = readFileSync(join(outDir, 'graphql.ts'), 'utf8');
    // Typed documents for the operations; enums become string unions.
    expect(types).toMatch(/export const WeekOfSlotsDocument = /);
    expect(types).toMatch(/export type CapacityChangesSubscription = \{ capacityChanged: Array<\{ scope: CapacityChangeScope, /);
    expect(types).toMatch(/export type CapacityChangeScope =/);
    const program = ts.createProgram(
      generated.map((f) => join(outDir, f)),
      { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, typeRoots: [join(process.cwd(), 'node_modules/@types')], baseUrl: process.cwd(), paths: { '*': [join(process.cwd(), 'node_modules/*')] } },
    );
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
