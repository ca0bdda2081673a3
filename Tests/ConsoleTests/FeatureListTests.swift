// The list of console features holds what "a view is one folder and one line" promises: each
// feature's keys reach the key map and the help view, no two features claim a view or a scope.
import Testing

@testable import Console

@Suite("Console features")
struct FeatureListTests {
    @Test("each feature binds keys only in its own scope or everywhere, and help lists them in its section")
    func keysInOwnSection() {
        let help = helpLines(KeyMap.standard, lab: true, width: 400).map { $0.map(\.text).joined() }
        for feature in ConsoleFeatures.all {
            for binding in feature.bindings {
                #expect(
                    binding.scope == feature.scope || binding.scope == .global,
                    "\(feature) binds '\(binding.command.name)' under \(binding.scope.title)")
                #expect(
                    KeyMap.standard.bindings.contains { $0.scope == binding.scope && $0.command == binding.command },
                    "\(feature)'s '\(binding.command.name)' is not in the key map")
                // The binding's row comes after its section's title and before the next section's.
                guard let section = help.firstIndex(of: " " + binding.scope.title) else {
                    Issue.record("help has no section \(binding.scope.title)")
                    continue
                }
                let rows = help[(section + 1)...].prefix { !$0.hasPrefix(" ") || $0.hasPrefix("   ") }
                #expect(
                    rows.contains { $0.contains(binding.summary) && $0.contains("[\(binding.command.name)]") },
                    "help's \(binding.scope.title) misses \(binding.summary)")
            }
        }
    }

    @Test("no two features claim one view, one scope or one title")
    func oneOwnerEach() {
        let views = ConsoleFeatures.all.filter { !$0.isOverlay }.map { $0.view }
        #expect(Set(views).count == views.count, "two features draw one view: \(views.map(\.title))")
        #expect(Set(views.map(\.title)).count == views.count)
        let scopes = ConsoleFeatures.all.compactMap { $0.scope }
        #expect(Set(scopes).count == scopes.count, "two features share a key scope")
        #expect(Set(KeyScope.all.map(\.title)).count == KeyScope.all.count, "two scopes share a help title")
        for overlay in ConsoleFeatures.all where overlay.isOverlay {
            #expect(views.contains(overlay.view), "\(overlay) is drawn over a view no feature draws")
        }
    }

    @Test("each tab's number key opens it, in the order of the tab bar")
    func tabNumbers() {
        for (index, view) in ConsoleView.tabs.enumerated() {
            var state = ConsoleFixtures.emptyState()
            state.view = view == .probe ? .cache : .probe
            _ = reduce(into: &state, action: .key(.character(Character(String(index + 1)))))
            #expect(state.view == view, "\(index + 1) shows \(state.view.title), not \(view.title)")
        }
    }

    @Test("a feature's key never hides a key every view shares: the shipped map has no clash")
    func noClashWithGlobal() {
        let everywhere = KeyMap.standard.bindings.filter { $0.scope == .global }
        for feature in ConsoleFeatures.all {
            for binding in feature.bindings where binding.scope != .global {
                for shared in everywhere where shared.command != binding.command {
                    #expect(
                        !binding.keys.contains(where: shared.keys.contains),
                        "\(feature)'s '\(binding.command.name)' takes a key of '\(shared.command.name)'")
                }
            }
        }
    }
}
