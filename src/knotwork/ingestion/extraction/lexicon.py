"""Curated word lists for rule-based extraction. Data only; no logic."""

from __future__ import annotations


def _words(text: str) -> list[str]:
    return text.split()

TECHNOLOGIES: frozenset[str] = frozenset(
    _words("""
    Kafka PostgreSQL Postgres MySQL MariaDB SQLite Oracle Redis Memcached MongoDB Cassandra
    DynamoDB Elasticsearch OpenSearch Solr Neo4j Snowflake BigQuery Redshift Databricks Spark
    Hadoop Hive Presto Trino Airflow Dagster Flink Beam dbt Looker Tableau Grafana Prometheus
    Datadog Splunk Kibana Logstash Jaeger Sentry PagerDuty Opsgenie Kubernetes Docker Helm
    Terraform Ansible Puppet Chef Vault Consul Nomad Istio Envoy Nginx HAProxy Traefik Jenkins
    CircleCI TravisCI ArgoCD Argo Spinnaker Bazel Gradle Maven npm Yarn Webpack Vite React Angular
    Vue Svelte Django Flask FastAPI Rails Spring Express Node.js Deno Python Java Go Golang Rust
    Scala Kotlin Swift TypeScript JavaScript Ruby PHP Perl Haskell Elixir Erlang Clojure C++ C#
    .NET GraphQL gRPC REST OAuth SAML LDAP Okta Auth0 Keycloak AWS Azure GCP S3 EC2 Lambda EKS
    GKE AKS CloudFront Cloudflare Fastly Akamai Heroku Vercel Netlify OpenStack VMware Linux
    Ubuntu Debian CentOS RHEL Windows macOS iOS Android Jira Confluence Slack GitHub GitLab
    Bitbucket Figma Notion Zendesk Salesforce HubSpot SAP Workday ServiceNow Stripe Twilio
    SendGrid RabbitMQ ActiveMQ NATS ZeroMQ Pulsar Kinesis SQS SNS Celery Sidekiq Temporal
    TensorFlow PyTorch scikit-learn Pandas NumPy Jupyter MLflow Kubeflow SageMaker Ray LangChain
    OpenAI Hugging Face ClickHouse TimescaleDB InfluxDB CockroachDB Vitess Debezium Fivetran
    Segment Amplitude Mixpanel LaunchDarkly Backstage SonarQube Snyk Dependabot Renovate
    Playwright Selenium Cypress Jest pytest JUnit Postman Swagger OpenAPI Protobuf Avro Parquet
    Iceberg Delta Lake Qdrant Pinecone Weaviate Milvus FAISS Lucene WebAssembly Wasm
    """)
) | frozenset(
    {
        "GitHub Actions", "GitLab CI", "Google Cloud", "Amazon Web Services", "Microsoft Azure",
        "Azure DevOps", "Cloud Run", "Cloud Functions", "App Engine", "Hugging Face",
        "Delta Lake", "Apache Kafka", "Apache Spark", "Apache Airflow", "Apache Flink",
        "Google Analytics", "Power BI", "Visual Studio Code", "VS Code", "Ruby on Rails",
        "Spring Boot", "Node.js", "Next.js", "Nest.js", "Vue.js", "Amazon S3", "AWS Lambda",
        "Elastic Stack", "ELK", "New Relic", "Sumo Logic", "Google Workspace", "Microsoft Teams",
        "Microsoft 365", "Office 365", "Cloud SQL", "Aurora", "RDS", "ECS", "Fargate",
    }
)

PROJECT_WORDS: frozenset[str] = frozenset({"Project", "Operation", "Initiative", "Program", "Programme"})
TEAM_WORDS: frozenset[str] = frozenset(
    {"Team", "Squad", "Guild", "Tribe", "Chapter", "Department", "Division", "Group", "Committee",
     "Council", "Org", "Crew", "Unit", "Taskforce", "Task Force", "Board", "Office"}
)
SYSTEM_WORDS: frozenset[str] = frozenset(
    {"Service", "Services", "Platform", "API", "Pipeline", "Gateway", "Portal", "App", "Dashboard",
     "Cluster", "Database", "Engine", "Library", "SDK", "Tool", "Bot", "Cache", "Queue", "Store",
     "Registry", "Console", "System", "Framework", "Warehouse", "Lake", "Mesh", "Proxy", "Server"}
)
COMPANY_SUFFIXES: frozenset[str] = frozenset(
    {"Inc", "Inc.", "Corp", "Corp.", "Corporation", "LLC", "Ltd", "Ltd.", "GmbH", "AG", "SA",
     "PLC", "Labs", "Technologies", "Systems", "Robotics", "Solutions", "Holdings", "Partners",
     "Group", "Capital", "Ventures", "Industries", "Software", "Networks", "Analytics", "Bank"}
)
TITLES: frozenset[str] = frozenset(
    {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "mx", "rev"}
)

# Common given names (several cultures): lets a capitalised "Given Family" pair be typed PERSON
# when statistical NER mislabels it, and lets a lone given name link to a full name.
FIRST_NAMES: frozenset[str] = frozenset(
    _words("""
    aaron abby abdul abigail adam adrian ahmed aisha alan albert alejandro alex alexander alexandra
    alexis ali alice alicia alina alison amanda amelia amir amit amy ana andre andrea andrew andy
    angela anita ann anna anne anthony antonio arjun arthur asha ashley aurora austin ava ayesha
    barbara ben benjamin beth betty bill bob bobby brad brandon brenda brian bruce bryan caitlin
    cameron camila carl carla carlos carmen carol caroline carter catherine charles charlie
    charlotte chen chloe chris christian christina christine christopher cindy claire clara colin
    connor craig cynthia dan dana daniel daniela danielle dani david deborah debra dennis derek
    diana diego dmitri dominic donald donna dorothy doug douglas dylan ed eddie edward elena eli
    elijah elizabeth ella ellen emily emma eric erica erik ethan eva evan evelyn fatima felix
    fernando fiona frances francesca francis frank gabriel gabriela gary george georgia grace greg
    gregory hannah hans harold harper harry heather helen henry hiro hiroshi holly hugo ian ibrahim
    irene isaac isabel isabella ivan jack jackson jacob jade james jamie jan jane janet jason
    javier jay jean jeff jeffrey jennifer jenny jeremy jerry jessica jim jin joan joe joel john
    jonathan jordan jorge jose joseph josh joshua joy juan judith julia julian julie justin kai
    kamal karen karl kate katherine kathleen kathy katie kayla keith kelly ken kenji kenneth kevin
    kim kyle lakshmi lara laura lauren leah lee leo leon li liam lily linda lisa liz logan lori
    louis lucas lucy luis luke lydia madison maggie mai manuel marco marcus margaret maria mariana
    marie mario mark martha martin mary mason matt matthew maya megan mei melissa mia michael
    michelle miguel mike min mohamed mohammed monica nadia nancy naomi natalie nathan neil nicholas
    nick nicole nikhil nina noah nora oliver olivia omar oscar owen pablo pam patricia patrick paul
    paula pedro peter philip pierre priya rachel rahul raj rajesh ralph ravi raymond rebecca ren
    richard rick rita rob robert roberto robin rohan ron ronald rosa ross ruby russell ruth ryan
    sally sam samantha samir samuel sandra sara sarah scott sean sebastian sergei seth shannon
    sharon shawn sofia sophia sophie stephanie stephen steve steven sunil susan suzanne tanya tara
    taylor ted teresa terry thomas tim timothy tina todd tom tony tracy tyler valentina vanessa
    victor victoria vikram vincent virginia walter wei wendy william xavier yan yara yuki yusuf
    zach zachary zara zoe
    """)
)

# Words that look like names in enterprise chatter but are not entities.
STOP_NAMES: frozenset[str] = frozenset(
    {"hi", "hello", "hey", "thanks", "thank", "ok", "okay", "yes", "no", "lol", "fyi", "eod", "eta",
     "tbd", "todo", "today", "tomorrow", "yesterday", "monday", "tuesday", "wednesday",
     "thursday", "friday", "saturday", "sunday", "q1", "q2", "q3", "q4", "h1", "h2", "pr", "prs",
     "qa", "ci", "cd", "ui", "ux", "faq", "agenda", "notes", "summary", "update", "action items",
     "decision", "owner", "status", "team", "everyone", "all", "channel", "here", "the team",
     "utc", "gmt", "cet", "cest", "pst", "pdt", "est", "edt", "id", "n/a", "tbc", "asap", "eom",
     # roles, not entities: "reports to the CTO, Tomasz Wieczorek" names one person, not an org
     "ceo", "cto", "cfo", "coo", "cio", "ciso", "cpo", "cmo", "cro", "vp", "svp", "evp", "em", "tpm",
     # working vocabulary, not names: "the API versioning policy", "SLO definitions"
     "api", "apis", "slo", "slos", "sla", "slas", "sli", "slis", "kpi", "kpis", "okr", "okrs",
     "sdk", "sdks", "mvp", "poc", "roi", "rca", "etl", "url", "urls", "rfc", "rfcs"}
)

# vendor prefixes of technology names: "Apache Kafka" is "Kafka"
VENDOR_PREFIXES: tuple[str, ...] = ("apache ", "amazon ", "aws ", "google ", "microsoft ", "azure ",
                                    "gcp ", "hashicorp ", "elastic ")

# Function words and calendar words: never a name on their own, even capitalised.
FUNCTION_WORDS: frozenset[str] = frozenset(
    _words("""a an the this that these those it its we our us you your they their them he she his her
    i me my mine in on at to for from by with of and or but if so as is are was were be been
    being has have had do does did will would can could should may might must shall not no yes
    all any each every some both either neither what which who whom whose when where why how
    there here then than also just only still now new old next last per via about after before
    during over under into onto out up down off again once please thanks thank hi hello hey
    ok okay sure great good nice cool lgtm fyi btw imo re cc pls done note notes update updates
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday""")
)

# What kind of thing a well-known technology is, for "What database does X use?": the category
# nouns a question may name (singular), each with the technologies of that kind.
_DATABASES = _words("""PostgreSQL Postgres MySQL MariaDB SQLite Oracle MongoDB Cassandra DynamoDB
    CockroachDB ClickHouse TimescaleDB InfluxDB Neo4j Redis Snowflake BigQuery Redshift Aurora RDS
    Vitess Spanner Firestore Couchbase ScyllaDB Elasticsearch OpenSearch Qdrant Pinecone Weaviate
    Milvus""") + ["Cloud SQL", "SQL Server", "Cosmos DB", "Amazon Aurora"]
_QUEUES = _words("Kafka RabbitMQ ActiveMQ NATS ZeroMQ Pulsar Kinesis SQS SNS Celery Sidekiq "
                 "Redpanda") + ["Apache Kafka", "Pub/Sub", "Google Pub/Sub", "Event Hubs",
                                "Service Bus"]
_LANGUAGES = _words("Python Java Go Golang Rust Scala Kotlin Swift TypeScript JavaScript Ruby PHP "
                    "Perl Haskell Elixir Erlang Clojure C++ C# F# Dart Lua Julia R SQL")
_CLOUDS = _words("AWS Azure GCP Heroku OpenStack DigitalOcean Hetzner Vercel Netlify") + [
    "Google Cloud", "Amazon Web Services", "Microsoft Azure", "Oracle Cloud", "IBM Cloud"]
_FRAMEWORKS = _words("React Angular Vue Svelte Django Flask FastAPI Rails Spring Express Next.js "
                     "Nest.js Vue.js .NET Laravel Phoenix Quarkus Micronaut Gin Ktor TensorFlow "
                     "PyTorch") + ["Ruby on Rails", "Spring Boot", "ASP.NET"]
_CACHES = _words("Redis Memcached Varnish Hazelcast")
_SEARCH = _words("Elasticsearch OpenSearch Solr Lucene Algolia Typesense Meilisearch")
_WAREHOUSES = _words("Snowflake BigQuery Redshift Databricks ClickHouse Synapse") + ["Delta Lake"]
_ORCHESTRATORS = _words("Airflow Dagster Prefect Temporal Argo Kubernetes Nomad Luigi") + [
    "Apache Airflow"]
_MONITORING = _words("Grafana Prometheus Datadog Splunk Kibana Jaeger Sentry Honeycomb Loki") + [
    "New Relic", "Sumo Logic"]
_CI = _words("Jenkins CircleCI TravisCI ArgoCD Buildkite TeamCity Spinnaker") + [
    "GitHub Actions", "GitLab CI", "Azure DevOps"]
TECHNOLOGY_CATEGORIES: dict[str, frozenset[str]] = {
    **{w: frozenset(_DATABASES) for w in ("database", "db", "datastore", "data store", "store")},
    **{w: frozenset(_QUEUES) for w in ("queue", "message queue", "message broker", "broker",
                                       "message bus", "event bus", "streaming platform")},
    **{w: frozenset(_LANGUAGES) for w in ("language", "programming language")},
    **{w: frozenset(_CLOUDS) for w in ("cloud", "cloud provider", "hosting provider")},
    **{w: frozenset(_FRAMEWORKS) for w in ("framework", "web framework", "frontend framework",
                                           "ml framework")},
    "cache": frozenset(_CACHES),
    "search engine": frozenset(_SEARCH),
    **{w: frozenset(_WAREHOUSES) for w in ("warehouse", "data warehouse")},
    **{w: frozenset(_ORCHESTRATORS) for w in ("orchestrator", "scheduler", "workflow engine")},
    **{w: frozenset(_MONITORING) for w in ("monitoring tool", "monitoring", "observability tool")},
    **{w: frozenset(_CI) for w in ("ci", "ci system", "ci tool", "ci/cd")},
}
