// The key map: the line's and the panel's keys, each feature's (`ConsoleFeature.bindings`) and
// those of every view, in one table the reducer dispatches through and the help view lists.
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

/// What a key asks for, by the name `[keys]` and the help view use. Those every view shares are
/// declared here; a view's own are declared in its folder (`Command.sortNext` with the cache view).
public struct Command: Hashable, Sendable {
    /// The name `[keys]` and the help view use for the command.
    public let name: String
    /// The view it shows, for a view's number key.
    public let shownView: ConsoleView?

    init(_ name: String) {
        self.name = name
        shownView = nil
    }

    /// Show `view` (its number key).
    public static func showView(_ view: ConsoleView) -> Command {
        Command(name: "view-\(view.title.lowercased())", shownView: view)
    }

    private init(name: String, shownView: ConsoleView) {
        self.name = name
        self.shownView = shownView
    }

    public static let nextView = Command("next-view")
    public static let previousView = Command("previous-view")
    public static let up = Command("up")
    public static let down = Command("down")
    public static let top = Command("top")
    public static let bottom = Command("bottom")
    public static let pageUp = Command("page-up")
    public static let pageDown = Command("page-down")
    public static let open = Command("open")
    public static let back = Command("back")
    public static let filter = Command("filter")
    public static let typeHost = Command("type-host")
    public static let export = Command("export")
    public static let quit = Command("quit")
    /// This help (`HelpView.swift`): every key.
    public static let help = Command("help")
    /// Show the command that reproduces the selection, and copy it (`ReproducePanel`).
    public static let reproduce = Command("reproduce")
    // While typing on the input line, a filter or a confirmation.
    public static let submit = Command("submit")
    public static let cancel = Command("cancel")
    public static let historyPrevious = Command("history-previous")
    public static let historyNext = Command("history-next")
    public static let deleteBackward = Command("delete-backward")
    /// readline's editing keys (`EditedLine`).
    public static let cursorLeft = Command("cursor-left")
    public static let cursorRight = Command("cursor-right")
    public static let lineStart = Command("line-start")
    public static let lineEnd = Command("line-end")
    public static let deleteForward = Command("delete-forward")
    public static let deleteToStart = Command("delete-to-start")
    public static let deleteWordBackward = Command("delete-word")
    public static let confirmYes = Command("confirm-yes")
    public static let confirmNo = Command("confirm-no")
}

/// Where a binding applies, titled as the help view's section. The first matching scope wins,
/// most specific first. Those of the views are declared in their folders (`KeyScope.cache`).
public struct KeyScope: Hashable, Sendable {
    /// The help view's title for its section.
    public let title: String

    init(_ title: String) { self.title = title }

    public static let typing = KeyScope("While typing a host or a filter")
    public static let confirm = KeyScope("When asked to confirm")
    public static let reproducePanel = KeyScope("Reproduce panel")
    public static let global = KeyScope("Everywhere")

    /// Every scope in the order the help view lists them: the line's and the panel's, each
    /// feature's in the order of `ConsoleFeatures.all`, then those of every view.
    public static var all: [KeyScope] {
        [.typing, .confirm, .reproducePanel] + ConsoleFeatures.all.compactMap { $0.scope } + [.global]
    }
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

    /// The keys as shipped: the line's and the panel's, each feature's, then those of every view.
    public static var defaultBindings: [KeyBinding] {
        lineBindings + ConsoleFeatures.all.flatMap { $0.bindings } + everywhereBindings
    }

    /// The keys of the host line, the filter line, a confirmation and the reproduce panel.
    static let lineBindings: [KeyBinding] = [
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
    ]

    /// The keys that mean the same in every view (a view's number key and opening letter are
    /// its feature's).
    static let everywhereBindings: [KeyBinding] = [
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
        return ConsoleFeatures.shareKeys(self, other)
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
                    ? "in the \(a.scope.title.lowercased())"
                    : "in the \((a.scope == .global ? b : a).scope.title.lowercased())"
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
