// The one table of key bindings: the reducer dispatches through it and the help view is
// generated from it, so the two can never disagree. `[keys]` in the configuration remaps it.
import ConfigurationSources
import NameResolution

/// A key as the console understands it, whatever the terminal sent.
public enum Key: Hashable, Sendable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, backspace, tab, backTab, delete
    /// Ctrl plus a letter (lowercase).
    case control(Character)

    /// How the help view names the key.
    public var label: String {
        switch self {
        case .character(" "): "Space"
        case .character(let c): String(c)
        case .up: "Up"
        case .down: "Down"
        case .left: "Left"
        case .right: "Right"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .home: "Home"
        case .end: "End"
        case .enter: "Enter"
        case .escape: "Esc"
        case .backspace: "Backspace"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .delete: "Del"
        case .control(let c): "Ctrl-\(String(c).uppercased())"
        }
    }
}

/// What a key asks for.
public enum Command: Hashable, Sendable {
    case showView(ConsoleView)
    case nextView, previousView
    case up, down, top, bottom, pageUp, pageDown
    case open, back
    case filter
    case typeHost
    case reprobe
    case refreshEntry
    case export
    case quit
    case help
    case sortNext, sortReverse
    case flushEntry, flushAll
    case cycleFamily, toggleReuseExpired
    case nextLabFault, clearLabFault
    /// Show the command that reproduces the selection, and copy it (`ReproducePanel`).
    case reproduce
    /// Ask every configured provider for the selected host (`CompareView`).
    case compareProviders
    /// The IP view of the selected host (`IPView.swift`), and its own commands.
    case showIPs, rerank, probeIP, nextTechnique
    /// Watch the selected host (`WatchView.swift`), and its own commands.
    case watch, lengthenWatchInterval, shortenWatchInterval
    /// Open the doctor view and run every check (`DoctorView.swift`); in that view, run them again.
    case doctor
    // While typing on the input line, a filter or a confirmation.
    case submit, cancel, historyPrevious, historyNext, deleteBackward
    /// readline's editing keys (`EditedLine`).
    case cursorLeft, cursorRight, lineStart, lineEnd, deleteForward, deleteToStart, deleteWordBackward
    case confirmYes, confirmNo
}

/// Where a binding applies. The first matching scope wins, most specific first.
public enum KeyScope: String, Sendable, CaseIterable {
    case typing = "While typing a host or a filter"
    case confirm = "When asked to confirm"
    case reproducePanel = "Reproduce panel"
    case traceDetail = "Trace detail"
    case probe = "Probe view"
    case ipView = "IP view (i)"
    case watchView = "Watch view (w)"
    case cache = "Cache view"
    case traces = "Traces view"
    case events = "Events view"
    case compare = "Compare view"
    case doctor = "Doctor view (D)"
    case global = "Everywhere"
}

/// One row of the key map.
public struct KeyBinding: Sendable {
    public var keys: [Key]
    public var command: Command
    public var scope: KeyScope
    public var summary: String
    /// Shown only when the console runs against the lab.
    public var labOnly = false
}

/// The key map of the console: the bindings in force, the defaults with `[keys]` applied.
public struct KeyMap: Sendable {
    public private(set) var bindings: [KeyBinding]

    /// The keys as shipped.
    public static let standard = KeyMap(bindings: defaultBindings)

    public static let defaultBindings: [KeyBinding] = [
        KeyBinding(keys: [.enter], command: .submit, scope: .typing, summary: "probe the host, or apply the filter"),
        KeyBinding(
            keys: [.escape], command: .cancel, scope: .typing,
            summary: "leave the line (Esc again clears the host; a filter is cleared at once)"),
        KeyBinding(keys: [.up], command: .historyPrevious, scope: .typing, summary: "previous host from the history"),
        KeyBinding(keys: [.down], command: .historyNext, scope: .typing, summary: "next host from the history"),
        KeyBinding(keys: [.left], command: .cursorLeft, scope: .typing, summary: "cursor left"),
        KeyBinding(keys: [.right], command: .cursorRight, scope: .typing, summary: "cursor right"),
        KeyBinding(keys: [.control("a"), .home], command: .lineStart, scope: .typing, summary: "start of the line"),
        KeyBinding(keys: [.control("e"), .end], command: .lineEnd, scope: .typing, summary: "end of the line"),
        KeyBinding(
            keys: [.backspace], command: .deleteBackward, scope: .typing,
            summary: "delete the character before the cursor"),
        KeyBinding(
            keys: [.delete, .control("d")], command: .deleteForward, scope: .typing,
            summary: "delete the character at the cursor"),
        KeyBinding(
            keys: [.control("u")], command: .deleteToStart, scope: .typing, summary: "delete up to the cursor"),
        KeyBinding(
            keys: [.control("w")], command: .deleteWordBackward, scope: .typing,
            summary: "delete the word before the cursor"),
        KeyBinding(
            keys: [.character("y"), .character("Y")], command: .confirmYes, scope: .confirm, summary: "yes, do it"),
        KeyBinding(
            keys: [.character("n"), .character("N"), .escape], command: .confirmNo, scope: .confirm,
            summary: "no, leave it"),
        KeyBinding(
            keys: [.escape, .character("c"), .character("q")], command: .back, scope: .reproducePanel,
            summary: "close the panel"),
        KeyBinding(keys: [.up, .character("k")], command: .up, scope: .reproducePanel, summary: "scroll up"),
        KeyBinding(keys: [.down, .character("j")], command: .down, scope: .reproducePanel, summary: "scroll down"),
        KeyBinding(keys: [.escape, .character("i")], command: .back, scope: .ipView, summary: "close the IP view"),
        KeyBinding(
            keys: [.character("r")], command: .rerank, scope: .ipView,
            summary: "time the connects again"),
        KeyBinding(
            keys: [.enter], command: .probeIP, scope: .ipView,
            summary: "probe the selected IP"),
        KeyBinding(
            keys: [.character("t"), .right], command: .nextTechnique, scope: .ipView,
            summary: "next technique for Enter"),
        KeyBinding(keys: [.escape], command: .back, scope: .watchView, summary: "stop watching"),
        KeyBinding(
            keys: [.character("w")], command: .watch, scope: .watchView,
            summary: "hide; the watch goes on"),
        KeyBinding(
            keys: [.character("+"), .character("=")], command: .lengthenWatchInterval, scope: .watchView,
            summary: "1 s more between rounds"),
        KeyBinding(
            keys: [.character("-")], command: .shortenWatchInterval, scope: .watchView,
            summary: "1 s less between rounds"),
        KeyBinding(
            keys: [.character("e")], command: .export, scope: .watchView,
            summary: "export the rounds (JSON Lines)"),
        KeyBinding(
            keys: [.escape, .backspace], command: .back, scope: .traceDetail, summary: "back to the traces list"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .traceDetail,
            summary: "copy the command that reproduces this trace"),
        KeyBinding(keys: [.up, .character("k")], command: .up, scope: .traceDetail, summary: "scroll up"),
        KeyBinding(keys: [.down, .character("j")], command: .down, scope: .traceDetail, summary: "scroll down"),
        KeyBinding(
            keys: [.character("p"), .character(":")], command: .typeHost, scope: .probe,
            summary: "type a host or URL to probe"),
        KeyBinding(keys: [.character("r")], command: .reprobe, scope: .probe, summary: "probe the selected host again"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .probe,
            summary: "copy the commands that reproduce the selected probe"),
        KeyBinding(
            keys: [.character("i")], command: .showIPs, scope: .probe,
            summary: "its IPs, ranked as the SDKs do"),
        KeyBinding(
            keys: [.character("w")], command: .watch, scope: .probe,
            summary: "watch it: a probe every few s"),
        KeyBinding(keys: [.character("s")], command: .sortNext, scope: .cache, summary: "sort by the next column"),
        KeyBinding(keys: [.character("S")], command: .sortReverse, scope: .cache, summary: "reverse the sort order"),
        KeyBinding(keys: [.character("d")], command: .flushEntry, scope: .cache, summary: "flush the selected name"),
        KeyBinding(
            keys: [.character("D")], command: .flushAll, scope: .cache, summary: "flush every name (asks first)"),
        KeyBinding(
            keys: [.character("r")], command: .refreshEntry, scope: .cache,
            summary: "refresh the selected name from HTTPDNS"),
        KeyBinding(
            keys: [.character("f")], command: .cycleFamily, scope: .cache,
            summary: "next address family (auto, v4, v6, both)"),
        KeyBinding(
            keys: [.character("x")], command: .toggleReuseExpired, scope: .cache,
            summary: "turn expired-IP reuse on or off"),
        KeyBinding(keys: [.enter], command: .open, scope: .traces, summary: "open the selected trace"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .traces,
            summary: "copy the command that reproduces the selected trace"),
        KeyBinding(
            keys: [.character("F")], command: .nextLabFault, scope: .events,
            summary: "next lab fault (none, slow, error, malformed, down)", labOnly: true),
        KeyBinding(
            keys: [.character("N")], command: .clearLabFault, scope: .events, summary: "lab fault back to none",
            labOnly: true),
        // D is the cache view's flush-all, so the doctor's key is bound in each other view rather
        // than everywhere: a global D would be hidden there, which the key map refuses.
        KeyBinding(
            keys: [.character("D")], command: .doctor, scope: .probe,
            summary: "the doctor: is it the network?"),
        KeyBinding(
            keys: [.character("D")], command: .doctor, scope: .traces,
            summary: "the doctor: is it the network?"),
        KeyBinding(
            keys: [.character("D")], command: .doctor, scope: .events,
            summary: "the doctor: is it the network?"),
        KeyBinding(
            keys: [.character("D")], command: .doctor, scope: .compare,
            summary: "the doctor: is it the network?"),
        KeyBinding(
            keys: [.enter], command: .open, scope: .doctor, summary: "what the selected check sent and saw"),
        KeyBinding(
            keys: [.escape, .backspace], command: .back, scope: .doctor,
            summary: "back to the checks, or close the doctor"),
        KeyBinding(
            keys: [.character("r"), .character("D")], command: .doctor, scope: .doctor, summary: "run every check again"
        ),
        KeyBinding(
            keys: [.character("e")], command: .export, scope: .doctor, summary: "export the report (JSON)"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .doctor,
            summary: "copy the commands that reproduce the selected check"),
        KeyBinding(keys: [.character("1")], command: .showView(.probe), scope: .global, summary: "Probe view"),
        KeyBinding(keys: [.character("2")], command: .showView(.cache), scope: .global, summary: "Cache view"),
        KeyBinding(keys: [.character("3")], command: .showView(.traces), scope: .global, summary: "Traces view"),
        KeyBinding(keys: [.character("4")], command: .showView(.events), scope: .global, summary: "Events view"),
        KeyBinding(keys: [.character("?"), .character("5")], command: .help, scope: .global, summary: "this help"),
        KeyBinding(
            keys: [.character("r")], command: .compareProviders, scope: .compare, summary: "ask every provider again"),
        KeyBinding(
            keys: [.character("v")], command: .compareProviders, scope: .global,
            summary: "compare every provider's answer for the selected host"),
        KeyBinding(keys: [.tab], command: .nextView, scope: .global, summary: "next view"),
        KeyBinding(keys: [.backTab], command: .previousView, scope: .global, summary: "previous view"),
        KeyBinding(keys: [.up, .character("k")], command: .up, scope: .global, summary: "move up"),
        KeyBinding(keys: [.down, .character("j")], command: .down, scope: .global, summary: "move down"),
        KeyBinding(keys: [.character("g"), .home], command: .top, scope: .global, summary: "go to the top"),
        KeyBinding(keys: [.character("G"), .end], command: .bottom, scope: .global, summary: "go to the bottom"),
        KeyBinding(keys: [.pageUp, .control("b")], command: .pageUp, scope: .global, summary: "page up"),
        KeyBinding(keys: [.pageDown, .control("f")], command: .pageDown, scope: .global, summary: "page down"),
        KeyBinding(keys: [.character("/")], command: .filter, scope: .global, summary: "filter the current list"),
        KeyBinding(
            keys: [.character("p"), .character(":")], command: .typeHost, scope: .global,
            summary: "type a host to probe (from any view)"),
        KeyBinding(
            keys: [.character("e")], command: .export, scope: .global,
            summary: "export the traces listed (JSON Lines and HAR)"),
        KeyBinding(
            keys: [.escape], command: .back, scope: .global, summary: "clear the filter, or back to the probe view"),
        KeyBinding(
            keys: [.character("q"), .control("c")], command: .quit, scope: .global,
            summary: "quit (Ctrl-C also while typing)"),
    ]

    /// The command a key means in the given scopes, most specific scope first.
    public func command(for key: Key, in scopes: [KeyScope], lab: Bool) -> Command? {
        for scope in scopes {
            for binding in bindings where binding.scope == scope && binding.keys.contains(key) {
                if binding.labOnly && !lab { continue }
                return binding.command
            }
        }
        return nil
    }
}

// MARK: - Remapping (`[keys]`)

extension Command {
    /// The name `[keys]` and the help view use for the command.
    public var name: String {
        switch self {
        case .showView(let view): "view-\(view.title.lowercased())"
        case .nextView: "next-view"
        case .previousView: "previous-view"
        case .up: "up"
        case .down: "down"
        case .top: "top"
        case .bottom: "bottom"
        case .pageUp: "page-up"
        case .pageDown: "page-down"
        case .open: "open"
        case .back: "back"
        case .filter: "filter"
        case .typeHost: "type-host"
        case .reprobe: "reprobe"
        case .refreshEntry: "refresh"
        case .export: "export"
        case .quit: "quit"
        case .help: "help"
        case .sortNext: "sort"
        case .sortReverse: "sort-reverse"
        case .flushEntry: "flush"
        case .flushAll: "flush-all"
        case .cycleFamily: "family"
        case .toggleReuseExpired: "reuse-expired"
        case .nextLabFault: "next-lab-fault"
        case .clearLabFault: "clear-lab-fault"
        case .reproduce: "reproduce"
        case .compareProviders: "compare-providers"
        case .showIPs: "ips"
        case .rerank: "rerank"
        case .probeIP: "probe-ip"
        case .nextTechnique: "next-technique"
        case .watch: "watch"
        case .lengthenWatchInterval: "watch-slower"
        case .shortenWatchInterval: "watch-faster"
        case .doctor: "doctor"
        case .submit: "submit"
        case .cancel: "cancel"
        case .historyPrevious: "history-previous"
        case .historyNext: "history-next"
        case .deleteBackward: "delete-backward"
        case .cursorLeft: "cursor-left"
        case .cursorRight: "cursor-right"
        case .lineStart: "line-start"
        case .lineEnd: "line-end"
        case .deleteForward: "delete-forward"
        case .deleteToStart: "delete-to-start"
        case .deleteWordBackward: "delete-word"
        case .confirmYes: "confirm-yes"
        case .confirmNo: "confirm-no"
        }
    }
}

extension Key {
    /// The key a `[keys]` entry names: one character ("x"), a name as help shows it ("Enter",
    /// "PgDn", "Shift-Tab"; any case), or "Ctrl-" and a letter.
    public static func named(_ text: String) -> Key? {
        if text.count == 1, let c = text.first {
            return c.isNewline || c.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
                ? nil : .character(c)
        }
        let lower = text.lowercased()
        if lower.hasPrefix("ctrl-") || lower.hasPrefix("ctrl+") || lower.hasPrefix("c-") {
            let rest = lower.drop { $0 != "-" && $0 != "+" }.dropFirst()
            guard rest.count == 1, let letter = rest.first, letter.isASCII, letter.isLetter else { return nil }
            return .control(letter)
        }
        let names: [String: Key] = [
            "space": .character(" "), "up": .up, "down": .down, "left": .left, "right": .right, "pgup": .pageUp,
            "pageup": .pageUp, "pgdn": .pageDown, "pagedown": .pageDown, "home": .home, "end": .end,
            "enter": .enter, "return": .enter, "esc": .escape, "escape": .escape, "backspace": .backspace,
            "tab": .tab, "shift-tab": .backTab, "backtab": .backTab, "del": .delete, "delete": .delete,
        ]
        return names[lower]
    }
}

/// A `[keys]` entry the console cannot use, in words.
public struct KeyMapError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

extension KeyScope {
    /// Whether bindings of the two scopes can answer the same key press: the same scope, or a
    /// view's scope under `global` (the view's binding would hide the global one there).
    func overlaps(_ other: KeyScope) -> Bool {
        if self == other { return true }
        let modal: Set<KeyScope> = [.typing, .confirm, .reproducePanel]
        if modal.contains(self) || modal.contains(other) { return false }
        if self == .global || other == .global { return true }
        return Set([self, other]) == [.traces, .traceDetail]
    }
}

extension KeyMap {
    /// The standard keys with `[keys]` applied: each entry replaces the keys of that action in
    /// every scope it applies to.
    ///
    /// - Throws: `KeyMapError` for an unknown action or key, a letter for an action used while
    ///   typing, or two actions left on one key where both could answer it.
    public static func remapped(_ remaps: [KeyRemap], path: String = "[keys]") throws(KeyMapError) -> KeyMap {
        var map = KeyMap.standard
        let actions = map.actionNames
        for remap in remaps {
            guard actions.contains(remap.action) else {
                throw KeyMapError(
                    description:
                        "\(path): '\(remap.action)' is not an action; the actions are \(actions.sorted().joined(separator: ", ")) (the help view, ?, lists each beside its keys)"
                )
            }
            guard !remap.keys.isEmpty else {
                throw KeyMapError(description: "\(path) \(remap.action): give at least one key, e.g. \"x\"")
            }
            var keys: [Key] = []
            for name in remap.keys {
                guard let key = Key.named(name) else {
                    throw KeyMapError(
                        description:
                            "\(path) \(remap.action): '\(name)' is not a key; write a character (\"x\"), a name (Enter, Esc, Tab, Space, Up, PgDn, Home, ...) or Ctrl-X"
                    )
                }
                if !keys.contains(key) { keys.append(key) }
            }
            for index in map.bindings.indices where map.bindings[index].command.name == remap.action {
                if map.bindings[index].scope == .typing,
                    let typed = keys.first(where: { if case .character = $0 { true } else { false } })
                {
                    throw KeyMapError(
                        description:
                            "\(path) \(remap.action): '\(typed.label)' would be typed as text on the input line; choose a key such as Enter, Tab or Ctrl-X"
                    )
                }
                map.bindings[index].keys = keys
            }
        }
        if let clash = map.firstClash {
            throw KeyMapError(description: "\(path): \(clash)")
        }
        return map
    }

    /// Every action a binding carries, by name.
    public var actionNames: Set<String> { Set(bindings.map(\.command.name)) }

    /// The first key that two actions claim where both could answer it, as a sentence; nil when none.
    public var firstClash: String? {
        for (i, a) in bindings.enumerated() {
            for b in bindings[(i + 1)...] where a.command != b.command && a.scope.overlaps(b.scope) {
                guard let key = a.keys.first(where: b.keys.contains) else { continue }
                let place =
                    a.scope == b.scope
                    ? "in the \(a.scope.rawValue.lowercased())"
                    : "in the \((a.scope == .global ? b : a).scope.rawValue.lowercased())"
                return
                    "'\(key.label)' would mean both '\(a.command.name)' and '\(b.command.name)' \(place); give one of them another key"
            }
        }
        return nil
    }

    /// The first key bound to a command, as the hints show it.
    public func label(for command: Command) -> String {
        bindings.first { $0.command == command }?.keys.first?.label ?? "?"
    }

    /// The first key that means `command` where `scopes` apply (a key a nearer scope takes for
    /// something else is passed over), as the hint line shows it; nil when no key does.
    ///
    /// - Parameter typing: true on the input line, where a character is typed, not obeyed.
    public func label(for command: Command, in scopes: [KeyScope], lab: Bool, typing: Bool = false) -> String? {
        for scope in scopes {
            for binding in bindings where binding.scope == scope && binding.command == command {
                let key = binding.keys.first { key in
                    if typing, case .character = key { return false }
                    return self.command(for: key, in: scopes, lab: lab) == command
                }
                if let key { return key.label }
            }
        }
        return nil
    }
}
