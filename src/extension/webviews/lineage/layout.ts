// Lays the version tree out left to right: depth is the column, leaves take successive
// rows in version order and a parent sits at the middle of its children. Pure: unit-tested.
import { branchSlug, formatDelta, formatNumber, type VersionsModel } from '../../views/model';
import { NODE_HEIGHT, NODE_WIDTH, type LineageGraphEdge, type LineageGraphNode, type LineageState } from '../../../viewer/lineage/protocol';

const COL = NODE_WIDTH + 56;
const ROW = NODE_HEIGHT + 22;
const PAD = 16;

export function layoutLineage(model: VersionsModel, harness: string | null): LineageState {
  const nodes: LineageGraphNode[] = [];
  const edges: LineageGraphEdge[] = [];
  let row = 0;
  let maxDepth = 0;
  const seen = new Set<string>();
  const place = (id: string, depth: number): number => {
    const n = model.nodes.get(id)!;
    seen.add(id);
    maxDepth = Math.max(maxDepth, depth);
    const kids = n.children.filter((c) => model.nodes.has(c) && !seen.has(c));
    const ys = kids.map((c) => {
      const child = model.nodes.get(c)!;
      edges.push({ from: id, to: c, promoted: n.onPromotedLine && child.onPromotedLine, rejected: child.status === 'rejected' });
      return place(c, depth + 1);
    });
    const y = ys.length ? (ys[0]! + ys[ys.length - 1]!) / 2 : PAD + ROW * row++;
    const delta = n.primary?.delta ?? null;
    nodes.push({
      id,
      x: PAD + depth * COL,
      y,
      slug: branchSlug(n),
      status: n.status,
      score: n.primary && n.primary.value !== null ? formatNumber(n.primary.value) : null,
      delta: delta === null ? null : formatDelta(delta),
      trend: delta === null || delta === 0 ? 0 : delta > 0 ? 1 : -1,
      onPromotedLine: n.onPromotedLine,
      isPromotedTip: n.isPromotedTip,
      rejectReason: n.rejectReason,
      hypothesis: n.hypothesis,
    });
    return y;
  };
  for (const r of model.roots) place(r, 0);
  const metric = [...model.nodes.values()].find((n) => n.primary)?.primary?.name ?? null;
  nodes.sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
  return {
    status: nodes.length ? 'done' : 'empty',
    harness,
    metric,
    promoted: model.promoted,
    nodes,
    edges,
    width: PAD * 2 + maxDepth * COL + NODE_WIDTH,
    height: PAD * 2 + Math.max(0, row - 1) * ROW + NODE_HEIGHT,
    error: null,
  };
}
