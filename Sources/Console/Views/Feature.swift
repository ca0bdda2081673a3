// The console's views as features: each owns its state, keys, reduce step, drawing and hint line
// in its folder here; the reducer, the key map and the render ask `ConsoleFeatures.all`.
import FoundationEssentials
import NameResolution
import Probe

/// One view of the console (a tab, or a view a letter key opens), or a view drawn over one while
/// open (the IP view and the watch over the probe view, a trace's detail over the traces list).
///
/// Every requirement but `view`, `draw` and `hints` has a default that does nothing, so a feature
/// says only what it does. Its state lives in `ConsoleState.features` under its own type; its key
/// bindings join the key map's (`KeyMap.standard`) in the order of `ConsoleFeatures.all`.
protocol ConsoleFeature {
    /// What it keeps between actions (a cursor, a scroll, what it asked the engine).
    associatedtype State: Sendable = Void
    /// Its state before the first action.
    static var initialState: State { get }
    /// The view it belongs to.
    static var view: ConsoleView { get }
    /// True for a view with a number key and a tab, in the order of `ConsoleFeatures.all`.
    static var isTab: Bool { get }
    /// True for a view drawn over its view's own feature while `isOpen` says so.
    static var isOverlay: Bool { get }
    /// For an overlay: whether it is open over its view now.
    static func isOpen(_ state: ConsoleState) -> Bool
    /// For an overlay: true when a key must mean one thing in it and in the view under it (the
    /// trace detail over the traces list), so `[keys]` may not give a key two meanings there;
    /// false when its keys may hide the view's (the IP view's `r` re-ranks, the probe view's probes).
    static var sharesKeysWithView: Bool { get }
    /// The scope of its keys (a section of the help view); nil when it binds none of its own.
    static var scope: KeyScope? { get }
    /// Its key bindings, under its scope, and those it adds everywhere (its number key, the
    /// letter that opens it), as the help view lists them.
    static var bindings: [KeyBinding] { get }
    /// Its reduce step: what it does with an action, after the shared step. Every feature sees
    /// every action, shown or not (a watch goes on while hidden).
    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect]
    /// A command while it is shown; nil passes the command on, to the view under it and then to
    /// the commands every view shares.
    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]?
    /// A command it answers from any view (the letter that opens it), asked once what is shown
    /// passed the command on.
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]?
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
    /// A tag at the right of the tab bar for what it does while not shown (a hidden watch).
    static func tabBarTag(_ state: ConsoleState) -> Span?
    /// The line count and scroll of what it scrolls, for "lines 1-20 of 80"; nil when none.
    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)?
    /// The host its selection points at, for the compare view (`v`).
    static func selectedHost(_ state: ConsoleState) -> String?
    /// The attempts its selection stands for, and who gave their addresses, for `c`.
    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?)
}

extension ConsoleFeature where State == Void {
    static var initialState: Void { () }
}

extension ConsoleFeature {
    static var isTab: Bool { false }
    static var isOverlay: Bool { false }
    static func isOpen(_ state: ConsoleState) -> Bool { false }
    static var sharesKeysWithView: Bool { false }
    static var scope: KeyScope? { nil }
    static var bindings: [KeyBinding] { [] }
    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] { [] }
    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? { nil }
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? { nil }
    static func hostLineOpening(_ state: inout ConsoleState) {}
    static func move(by delta: Int, state: inout ConsoleState) {}
    static var filters: Bool { false }
    static func filterChanged(_ state: inout ConsoleState) {}
    static func bodyResized(_ state: inout ConsoleState) {}
    static func shown(_ state: inout ConsoleState) -> [ConsoleEffect] { [] }
    static func tabBarTag(_ state: ConsoleState) -> Span? { nil }
    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? { nil }
    /// A view without a selection of its own points at the probed host selected.
    static func selectedHost(_ state: ConsoleState) -> String? { ProbeFeature.selectedHost(state) }
    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?) {
        ([], nil)
    }
}

/// The features of the console: a new view is a folder under `Views/` and one line here.
enum ConsoleFeatures {
    /// Every feature, in the order the help view lists their keys; the tabs are numbered in this
    /// order too. Each sees every action in this order (no two change the same field for one).
    static var all: [any ConsoleFeature.Type] {
        [
            TraceDetailFeature.self, ProbeFeature.self, IPViewFeature.self, WatchFeature.self, CacheFeature.self,
            TracesFeature.self, EventsFeature.self, HelpFeature.self, CompareFeature.self, DoctorFeature.self,
            AuditFeature.self,
        ]
    }

    /// The views with a tab, in the order of their number keys.
    static var tabs: [ConsoleView] { all.filter { $0.isTab }.map { $0.view } }

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
        return [shown.count > 1 ? shown[0].scope : nil, view.scope].compactMap { $0 }
    }

    /// Whether two features' scopes can both answer a key: an overlay that shares its keys with
    /// its view (`sharesKeysWithView`) and that view.
    static func shareKeys(_ a: KeyScope, _ b: KeyScope) -> Bool {
        all.contains { overlay in
            guard overlay.isOverlay, overlay.sharesKeysWithView, let scope = overlay.scope,
                let under = base(overlay.view).scope
            else { return false }
            return Set([scope, under]) == Set([a, b])
        }
    }
}

/// The features' states, one per feature type: a feature declares its `State` and reads it
/// through `ConsoleState.features[Feature.self]`, so `ConsoleState` names no view's fields.
struct FeatureStates: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// The state of `feature`, its initial state until first changed.
    subscript<Feature: ConsoleFeature>(_ feature: Feature.Type) -> Feature.State {
        get { values[ObjectIdentifier(feature)] as? Feature.State ?? Feature.initialState }
        _modify {
            // Taken out while changed, so the change works on the only copy.
            let key = ObjectIdentifier(feature)
            var value = values.removeValue(forKey: key) as? Feature.State ?? Feature.initialState
            defer { values[key] = value }
            yield &value
        }
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
