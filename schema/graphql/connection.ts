import { type ClassType, Field, ObjectType } from 'type-graphql';
import type { Page } from '../../services/kernel/pagination.js';

/** Relay-style connections: a page of a list with one cursor per item; PageInfo is shared by every connection. */
@ObjectType('PageInfo', { description: 'Where a page ends: ask for the next one with `after: endCursor` while hasNextPage.' })
export class PageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true, description: 'Cursor of the last edge; null on an empty page' }) endCursor!: string | null;
}

export interface ConnectionValue<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: PageInfo;
}

/**
 * The base class of `<name>Connection`, with its `<name>Edge` type:
 * `@ObjectType('AppointmentConnection') class AppointmentConnection extends Connection(AppointmentType, 'Appointment') {}`.
 */
export function Connection<T extends object>(node: ClassType<T>, name: string) {
  @ObjectType(`${name}Edge`, { description: `One ${name} of a page, with the cursor standing for its place in the list.` })
  class Edge {
    @Field(() => String, { description: 'Opaque; pass as `after` for the items that follow this one' }) cursor!: string;
    @Field(() => node) node!: T;
  }

  @ObjectType()
  abstract class ConnectionBase {
    @Field(() => [Edge]) edges!: Edge[];
    @Field(() => [node], { description: 'The nodes of edges, for clients that need no cursor but the last' }) nodes!: T[];
    @Field(() => PageInfo) pageInfo!: PageInfo;
  }
  return ConnectionBase;
}

/** A service page as a connection value, each item turned into its GraphQL type. */
export function toConnection<S, T>(page: Page<S>, toNode: (item: S) => T): ConnectionValue<T> {
  const edges = page.edges.map((edge) => ({ cursor: edge.cursor, node: toNode(edge.node) }));
  return { edges, nodes: edges.map((edge) => edge.node), pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor } };
}
