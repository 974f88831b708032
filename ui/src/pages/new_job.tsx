// Create a job from its YAML spec; errors come back inline with their line and column. A caller
// who may submit nowhere (a viewer) is told so instead of offered the form; the pool proposed is
// the root of the caller's scope.
import { useEffect, useState } from "preact/hooks";
import { useLocation } from "wouter-preact";
import { maySubmit, useWhoAmI } from "../access";
import { call, num } from "../api";
import { YamlForm } from "../components/yaml_form";

const EXAMPLE = `name: hello
instances: 3
task:
  command: "echo hello from $PACELINE_INSTANCE_ID; sleep 2"
  resources: {cpu: 0.1, memory: 32Mi}
`;

export function NewJob() {
  const [, navigate] = useLocation();
  const [pool, setPool] = useState("/");
  const who = useWhoAmI();
  useEffect(() => {
    if (who && who.role !== "admin") setPool((p) => (p === "/" ? who.scope : p));
  }, [who]);
  if (who !== null && !maySubmit(who, "")) {
    return (
      <section>
        <h1>Create a job</h1>
        <p class="hint" data-not-allowed>
          {who.user} is a {who.role} on {who.scope}: submitting jobs needs the submitter, pool-admin
          or admin role.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Create a job</h1>
      <YamlForm
        label="Job spec (YAML, docs/specs.md)"
        initial={EXAMPLE}
        submitLabel="Create job"
        submit={async (yaml) => {
          const r = await call<{ job_id: string }>("JobService", "CreateJob", {
            pool,
            spec_yaml: yaml,
            spec_name: "job.yaml",
          });
          navigate(`/jobs/${num(r.job_id)}`);
        }}
      >
        <label>
          Pool
          <input
            name="pool"
            value={pool}
            onInput={(e) => setPool((e.target as HTMLInputElement).value)}
          />
        </label>
      </YamlForm>
    </section>
  );
}
