// The console's views as features: each owns its keys, its reduce step, its drawing and its hint
// line in its folder here; the reducer and the render ask `ConsoleFeatures.all` instead of switching.
import Foundation
import NameResolution
import Probe

/// One view of the console (a tab, or a view a letter key opens), or a view drawn over one while
/// open (the IP view and the watch over the probe view, a trace's detail over the traces list).
///
/// Every requirement but `view`, `draw` and `hints` has a default that does nothing, so a feature
/// says only what it does. Its bindings stay rows of the one `KeyMap` table, under its scope.
protocol ConsoleFeature {
    /// The view it belongs to.
    static var view: ConsoleView { get }
    /// True for a view drawn over its view's own feature while `isOpen` says so.
    static var isOverlay: Bool { get }
    /// For an overlay: whether it is open over its view now.
    static func isOpen(_ state: ConsoleState) -> Bool
    /// Its key scopes, nearest first (the key map's rows under them are its keys).
    static func scopes(_ state: ConsoleState) -> [KeyScope]
    /// Its reduce step: what it does with an action, after the shared step. Every feature sees
    /// every action, shown or not (a watch goes on while hidden).
    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect]
    /// A command while it is shown; nil passes the command on, to the view under it and then to
    /// the commands every view shares.
    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]?
    /// The host line is opening over it (`p`, from any view).
    static func hostLineOpening(_ state: inout ConsoleState)
    /// Moves its selection (or scroll) by `delta` rows: up, down, a page, the top or the bottom.
    static func move(by delta: Int, state: inout ConsoleState)
    /// Whether `/` filters it.
    static var filters: Bool { get }
    /// Its filter (`state.filters[view]`) changed.
    static func filterChanged(_ state: inout ConsoleState)
    /// The rows its body has changed (a resize, a long message): keep the selection in sight.
    static func bodyResized(_ state: inout ConsoleState)
    /// What to do when its view is shown by its number key or Tab.
    static func shown(_ state: inout ConsoleState) -> [ConsoleEffect]
    /// Draws its body in `rows`.
    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer)
    /// Its hint line in command mode: commands (labelled from the key map) and what they do.
    static func hints(_ state: ConsoleState) -> [(Command, String)]
    /// The line count and scroll of what it scrolls, for "lines 1-20 of 80"; nil when none.
    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)?
    /// The host its selection points at, for the compare view (`v`).
    static func selectedHost(_ state: ConsoleState) -> String?
    /// The attempts its selection stands for, and who gave their addresses, for `c`.
    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?)
}

extension ConsoleFeature {
    static var isOverlay: Bool { false }
    static func isOpen(_ state: ConsoleState) -> Bool { false }
    static func scopes(_ state: ConsoleState) -> [KeyScope] { [] }
    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] { [] }
    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? { nil }
    static func hostLineOpening(_ state: inout ConsoleState) {}
    static func move(by delta: Int, state: inout ConsoleState) {}
    static var filters: Bool { false }
    static func filterChanged(_ state: inout ConsoleState) {}
    static func bodyResized(_ state: inout ConsoleState) {}
    static func shown(_ state: inout ConsoleState) -> [ConsoleEffect] { [] }
    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? { nil }
    /// A view without a selection of its own points at the probed host selected.
    static func selectedHost(_ state: ConsoleState) -> String? { ProbeFeature.selectedHost(state) }
    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?) {
        ([], nil)
    }
}

/// The features of the console: a new view is a folder under `Views/` and one line here.
enum ConsoleFeatures {
    /// Every feature. Each sees every action in this order, so the cache view's refresh on a
    /// tick comes before a watch round it starts.
    static var all: [any ConsoleFeature.Type] {
        [
            ProbeFeature.self, CacheFeature.self, TracesFeature.self, EventsFeature.self, HelpFeature.self,
            CompareFeature.self, DoctorFeature.self,
            // Over the views above, nearest first.
            IPViewFeature.self, WatchFeature.self, TraceDetailFeature.self,
        ]
    }

    /// The feature of a view itself (not one drawn over it).
    static func base(_ view: ConsoleView) -> any ConsoleFeature.Type {
        guard let feature = all.first(where: { !$0.isOverlay && $0.view == view }) else {
            preconditionFailure("the view \(view.title) has no feature in ConsoleFeatures.all")
        }
        return feature
    }

    /// What is shown, nearest first: the overlays open over the current view, then the view's own
    /// feature. A command goes down this list until one takes it.
    static func shown(_ state: ConsoleState) -> [any ConsoleFeature.Type] {
        all.filter { $0.isOverlay && $0.view == state.view && $0.isOpen(state) } + [base(state.view)]
    }

    /// The feature that draws the body and the hint line: the nearest shown.
    static func top(_ state: ConsoleState) -> any ConsoleFeature.Type {
        shown(state)[0]
    }

    /// The scopes of what is shown: the nearest overlay's, then the view's own.
    static func scopes(_ state: ConsoleState) -> [KeyScope] {
        let shown = shown(state)
        let view = base(state.view)
        return (shown.count > 1 ? shown[0].scopes(state) : []) + view.scopes(state)
    }
}

extension ListCursor {
    /// Moves the selection by `delta` rows within `count`, keeping it among `visible` rows.
    mutating func step(by delta: Int, count: Int, visible: Int) {
        guard count > 0 else {
            self = ListCursor()
            return
        }
        let target = delta > 0 ? min(count - 1, selected &+ delta) : max(0, selected &+ delta)
        selected = max(0, min(count - 1, target))
        if selected < offset { offset = selected }
        if selected >= offset + visible { offset = selected - visible + 1 }
    }

    /// Keeps the selection within `count` rows and among `visible` rows.
    mutating func clamp(count: Int, visible: Int) {
        selected = max(0, min(selected, count - 1))
        if selected >= offset + visible { offset = selected - visible + 1 }
        offset = max(0, min(offset, selected))
    }
}

/// Rows a list shows: the body less its summary and header lines.
func listRows(_ state: ConsoleState) -> Int { max(1, bodyHeight(state) - 2) }
