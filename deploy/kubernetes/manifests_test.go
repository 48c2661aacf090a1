// Package kubernetes tests the manifests beside it: each is decoded strictly
// into the Kubernetes API types, so that a misspelt or misplaced field is an
// error here rather than something the API server drops, and the sidecar,
// probe, port and security facts docs/sidecar.md states are checked. It is a
// module of its own so that k8s.io/api stays out of signpost's.
package kubernetes

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// rulesFile is the rule file the ConfigMap carries, relative to this
// directory, and configMapFile the manifest that carries it.
const (
	rulesFile     = "../../configs/tickets.yaml"
	configMapFile = "configmap.yaml"
)

var update = flag.Bool("update", false, "copy "+rulesFile+" into "+configMapFile)

// kustomization is the part of kustomize's Kustomization these manifests
// use; any other key is an error, as in the API types.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// manifests are the objects of the directory, decoded.
type manifests struct {
	kustomization kustomization
	deployment    *appsv1.Deployment
	service       *corev1.Service
	configMap     *corev1.ConfigMap
}

// load decodes every YAML file of the directory strictly: unknown and
// duplicate fields are errors, and so is a kind these manifests do not use.
func load(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests here: %v", err)
	}
	var m manifests
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			var obj any
			switch head.APIVersion + " " + head.Kind {
			case "kustomize.config.k8s.io/v1beta1 Kustomization":
				obj = &m.kustomization
			case "apps/v1 Deployment":
				m.deployment = &appsv1.Deployment{}
				obj = m.deployment
			case "v1 Service":
				m.service = &corev1.Service{}
				obj = m.service
			case "v1 ConfigMap":
				m.configMap = &corev1.ConfigMap{}
				obj = m.configMap
			default:
				t.Fatalf("%s, document %d: apiVersion %q, kind %q: not a kind these manifests use (Kustomization, Deployment, Service, ConfigMap)",
					f, i+1, head.APIVersion, head.Kind)
			}
			if err := decodeStrict(doc, obj); err != nil {
				t.Fatalf("%s, document %d: %s %s: %v", f, i+1, head.APIVersion, head.Kind, err)
			}
		}
	}
	if m.deployment == nil || m.service == nil || m.configMap == nil || m.kustomization.Kind == "" {
		t.Fatalf("want a Kustomization, a Deployment, a Service and a ConfigMap among %v", files)
	}
	return m
}

// decodeStrict decodes one YAML document into obj as the API server's strict
// field validation does: field names are case-sensitive, and an unknown or
// duplicate field is an error that names its path.
func decodeStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := json.UnmarshalStrict(j, obj)
	return errors.Join(append([]error{err}, strict...)...)
}

// TestKustomization checks that kubectl apply -k applies every manifest.
func TestKustomization(t *testing.T) {
	m := load(t)
	files, _ := filepath.Glob("*.yaml")
	files = slices.DeleteFunc(files, func(f string) bool { return f == "kustomization.yaml" })
	got := slices.Sorted(slices.Values(m.kustomization.Resources))
	if !slices.Equal(got, files) {
		t.Errorf("kustomization.yaml resources = %v, want every manifest here: %v", got, files)
	}
}

// TestSidecar checks the pattern: signpost as a native sidecar in front of
// the legacy API on the pod's loopback, with the rules from the ConfigMap.
func TestSidecar(t *testing.T) {
	m := load(t)
	pod := m.deployment.Spec.Template.Spec
	sp := signpost(t, pod)
	if policy := ptr.Deref(sp.RestartPolicy, ""); policy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("init container signpost: restartPolicy %q, want Always (a native sidecar)", policy)
	}
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "legacy" {
		t.Fatalf("containers %v, want the one legacy API", names(pod.Containers))
	}
	legacy := pod.Containers[0]

	if got := argValue(sp.Args, "upstream"); got != "http://"+argValue(legacy.Args, "listen") {
		t.Errorf("signpost --upstream %q, want the legacy API's --listen %q", got, argValue(legacy.Args, "listen"))
	}
	if addr := argValue(legacy.Args, "listen"); !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("legacy --listen %q, want 127.0.0.1 only, so that nothing bypasses signpost", addr)
	}
	if got := argValue(sp.Args, "listen"); got != ":"+strconv.Itoa(int(port(t, sp, "http"))) {
		t.Errorf("signpost --listen %q, want its http port %d", got, port(t, sp, "http"))
	}
	if got := argValue(sp.Args, "admin"); got != ":"+strconv.Itoa(int(port(t, sp, "admin"))) {
		t.Errorf("signpost --admin %q, want its admin port %d", got, port(t, sp, "admin"))
	}

	// The rules: the ConfigMap, mounted read-only where --config reads.
	config := argValue(sp.Args, "config")
	var mount *corev1.VolumeMount
	for i, vm := range sp.VolumeMounts {
		if strings.HasPrefix(config, vm.MountPath+"/") {
			mount = &sp.VolumeMounts[i]
		}
	}
	if mount == nil || !mount.ReadOnly {
		t.Fatalf("signpost --config %q: no read-only volume mounted above it: %+v", config, sp.VolumeMounts)
	}
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })
	if i < 0 || pod.Volumes[i].ConfigMap == nil || pod.Volumes[i].ConfigMap.Name != m.configMap.Name {
		t.Fatalf("volume %q is not the ConfigMap %q", mount.Name, m.configMap.Name)
	}
	key := strings.TrimPrefix(config, mount.MountPath+"/")
	want, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.configMap.Data[key]; !ok || got != string(want) {
		if *update {
			copyRules(t, key, want)
			return
		}
		t.Errorf("ConfigMap %s key %q in %s differs from %s; go test -run TestSidecar -update copies it in",
			m.configMap.Name, key, configMapFile, rulesFile)
	}
}

// TestProbes checks that the kubelet probes signpost's admin listener:
// liveness on /livez, readiness on /readyz.
func TestProbes(t *testing.T) {
	m := load(t)
	pod := m.deployment.Spec.Template.Spec
	sp := signpost(t, pod)
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"livenessProbe", sp.LivenessProbe, "/livez"}, {"readinessProbe", sp.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("signpost %s: want an httpGet of %s on the admin port", p.name, p.path)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path || resolve(t, sp, g.Port) != port(t, sp, "admin") {
			t.Errorf("signpost %s: GET %s on port %s, want %s on the admin port %d", p.name, g.Path, g.Port.String(), p.path, port(t, sp, "admin"))
		}
	}
	for _, c := range pod.Containers {
		if c.LivenessProbe == nil || c.ReadinessProbe == nil {
			t.Errorf("container %s: want liveness and readiness probes", c.Name)
		}
	}
}

// TestService checks that the Service selects the pods and targets
// signpost's port, never the legacy API's.
func TestService(t *testing.T) {
	m := load(t)
	sp := signpost(t, m.deployment.Spec.Template.Spec)
	labels := m.deployment.Spec.Template.Labels
	for k, v := range m.service.Spec.Selector {
		if labels[k] != v {
			t.Errorf("Service selector %s=%s does not select the pods (labels %v)", k, v, labels)
		}
	}
	if len(m.service.Spec.Selector) == 0 {
		t.Error("Service has no selector")
	}
	for k, v := range m.deployment.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("Deployment selector %s=%s does not match its own pods (labels %v)", k, v, labels)
		}
	}
	if len(m.service.Spec.Ports) != 1 {
		t.Fatalf("Service ports %v, want signpost's alone", m.service.Spec.Ports)
	}
	if got := resolve(t, sp, m.service.Spec.Ports[0].TargetPort); got != port(t, sp, "http") {
		t.Errorf("Service targetPort %s is %d, want signpost's http port %d", m.service.Spec.Ports[0].TargetPort.String(), got, port(t, sp, "http"))
	}
}

// TestPrometheusAnnotations checks that the scrape annotations name
// signpost's admin port and its /metrics.
func TestPrometheusAnnotations(t *testing.T) {
	m := load(t)
	sp := signpost(t, m.deployment.Spec.Template.Spec)
	want := map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   strconv.Itoa(int(port(t, sp, "admin"))),
		"prometheus.io/path":   "/metrics",
	}
	for k, v := range want {
		if got := m.deployment.Spec.Template.Annotations[k]; got != v {
			t.Errorf("pod annotation %s = %q, want %q", k, got, v)
		}
	}
}

// TestSecurityAndResources checks every container: not root, a read-only
// root filesystem, no privilege escalation, no capabilities, and CPU and
// memory requests and limits.
func TestSecurityAndResources(t *testing.T) {
	m := load(t)
	pod := m.deployment.Spec.Template.Spec
	podNonRoot := pod.SecurityContext != nil && isTrue(pod.SecurityContext.RunAsNonRoot)
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s: no securityContext", c.Name)
			continue
		}
		if !podNonRoot && !isTrue(sc.RunAsNonRoot) {
			t.Errorf("container %s: runAsNonRoot is not true", c.Name)
		}
		if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			t.Errorf("container %s: runAsNonRoot false", c.Name)
		}
		if !isTrue(sc.ReadOnlyRootFilesystem) {
			t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s: privileged", c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s: capabilities %+v, want drop [ALL] and none added", c.Name, sc.Capabilities)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
				t.Errorf("container %s: %s request %s, limit %s; want both, the request no more than the limit", c.Name, r, req.String(), lim.String())
			}
		}
	}
}

// copyRules rewrites configMapFile with rules as its key, which must be the
// manifest's last: everything up to the key's line is kept.
func copyRules(t *testing.T, key string, rules []byte) {
	t.Helper()
	b, err := os.ReadFile(configMapFile)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := bytes.Cut(b, []byte("\n  "+key+": |\n"))
	if !ok {
		t.Fatalf("%s has no line %q to copy the rules under", configMapFile, "  "+key+": |")
	}
	out := append(head, "\n  "+key+": |\n"...)
	for _, line := range strings.SplitAfter(string(rules), "\n") {
		if line != "\n" {
			out = append(out, "    "...)
		}
		out = append(out, line...)
	}
	if err := os.WriteFile(configMapFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("copied %s into %s", rulesFile, configMapFile)
}

// signpost returns the pod's signpost container.
func signpost(t *testing.T, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	for _, c := range pod.InitContainers {
		if c.Name == "signpost" {
			return c
		}
	}
	t.Fatalf("no init container named signpost among %v", names(pod.InitContainers))
	return corev1.Container{}
}

func names(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// argValue returns the value of --name=value in args, or "".
func argValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// port returns the number of the container's port called name.
func port(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, name)
	return 0
}

// resolve returns the number a probe's or Service's port means on c.
func resolve(t *testing.T, c corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	return port(t, c, p.StrVal)
}

func isTrue(b *bool) bool { return ptr.Deref(b, false) }

// TestStrict checks that the decoding above catches what the API server
// would drop or refuse: a misspelt field, a field in the wrong case, a
// duplicate key.
func TestStrict(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n"
	for _, tc := range []struct{ yaml, want string }{
		{head + "          readinessProbes: {}\n", `unknown field "spec.template.spec.containers[0].readinessProbes"`},
		{head + "          ReadinessProbe: {}\n", `unknown field "spec.template.spec.containers[0].ReadinessProbe"`},
		{head + "          image: a\n          image: b\n", `key "image" already set in map`},
	} {
		err := decodeStrict([]byte(tc.yaml), &appsv1.Deployment{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decoding\n%s\ngot error %v, want %s", tc.yaml, err, tc.want)
		}
	}
}
