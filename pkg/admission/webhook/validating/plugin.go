package validating

import (
	"context"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/admission/configsource"
	"github.com/kapi-dev/kapi/pkg/admission/webhook"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "ValidatingAdmissionWebhook"

// Plugin is the ValidatingAdmissionWebhook plugin.
type Plugin struct {
	source     *configsource.Source[*webhook.Hook]
	dispatcher *webhook.Dispatcher
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin over the ValidatingWebhookConfigurations lw holds.
// Run must be running for it to admit anything.
func New(lw configsource.ListWatcher, opts webhook.Options) *Plugin {
	src := configsource.New(lw, webhook.CompileValidating, opts.Logger)
	return &Plugin{source: src, dispatcher: webhook.NewDispatcher(src, opts)}
}

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles every operation.
func (p *Plugin) Handles(admission.Operation) bool { return true }

// ReadsObjects implements admission.ObjectReader: no webhook reads a's
// objects when the configurations are known and there are none.
func (p *Plugin) ReadsObjects(admission.Attributes) bool { return !p.source.Empty() }

// Validate calls the matching webhooks.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	return p.dispatcher.Validate(ctx, a)
}

// Run keeps the configurations up to date until ctx ends.
func (p *Plugin) Run(ctx context.Context) { p.source.Run(ctx) }
