import * as z from 'zod/mini';
import { IpcCommand, IpcNotification } from '../protocol';

/** One version, placed: the host lays the tree out, the webview only draws it. */
export interface LineageGraphNode {
  id: string;
  x: number;
  y: number;
  slug: string;
  status: string;
  score: string | null;
  delta: string | null;
  /** -1 worse, 0 same or unknown, 1 better than the parent. */
  trend: -1 | 0 | 1;
  onPromotedLine: boolean;
  isPromotedTip: boolean;
  rejectReason: string | null;
  hypothesis: string | null;
}

export interface LineageGraphEdge {
  from: string;
  to: string;
  /** Both ends on the promoted line. */
  promoted: boolean;
  /** Leads to a rejected version (negative evidence). */
  rejected: boolean;
}

export interface LineageState {
  status: 'loading' | 'done' | 'empty' | 'failed';
  harness: string | null;
  metric: string | null;
  promoted: string | null;
  nodes: LineageGraphNode[];
  edges: LineageGraphEdge[];
  width: number;
  height: number;
  error: string | null;
}

export const NODE_WIDTH = 188;
export const NODE_HEIGHT = 58;

/** The lineage webview's whole vocabulary. */
export const DidChangeLineageNotification = new IpcNotification<LineageState>('lineage/didChangeState');
export const RefreshLineageCommand = new IpcCommand<void>('lineage/refresh', null);
export const OpenVersionCommand = new IpcCommand<{ id: string }>('lineage/openVersion', z.strictObject({ id: z.string().check(z.regex(/^v\d+$/)) }));
/** What the page asks the lineage panel: its method map. */
export const LineageMethods = { refresh: RefreshLineageCommand, openVersion: OpenVersionCommand };
